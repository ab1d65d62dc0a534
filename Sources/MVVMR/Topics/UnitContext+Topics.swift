import JSONPatch

extension UnitContext {
    /// The values published on `topic` (by any session or service, on any node) while this page is bound,
    /// in the order they reach the session; a value that does not decode as a `Value` is skipped.
    ///
    /// Each message reaches the session as an input of its own (``SessionInput/topic(name:value:)``), recorded
    /// in its log: a restored session replays the recorded messages instead of live ones, so it shows what it
    /// showed. The page subscribes when the signal is connected (the page's bindings connect it) and stops when
    /// the page is released. Only live sessions receive: a page shows the messages published while it was bound
    /// and its session was in memory, not those published before. Outside a session (a ViewModel tested alone)
    /// it never emits. A page that listens, when it is bound, to a topic whose name is not valid
    /// (``TopicName/isValid(_:)``) fails to bind (`binding_failed`), in a test as on a server.
    ///
    /// ```swift
    /// let messages = context.messages(on: .board).scan([BoardPost]()) { ($0 + [$1]).suffix(50) }
    /// ```
    /// - Parameter topic: the topic.
    public func messages<Value>(on topic: Topic<Value>) -> Signal<Value> {
        guard let topics = sessionTurn?.topics else { return .never }
        let unit = self.unit
        let name = topic.name
        return Signal(connect: { [topics] target in
            topics.subscribe(to: name, unit: unit) { json in
                if let value = try? JSONValueDecoder().decode(Value.self, from: json) { target.emit(value) }
            }
        })
    }
}
