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
    /// it never emits.
    ///
    /// ```swift
    /// let messages = context.messages(on: .board).scan([BoardPost]()) { ($0 + [$1]).suffix(50) }
    /// ```
    /// - Parameter topic: the topic.
    public func messages<Value>(on topic: Topic<Value>) -> Signal<Value> {
        guard let topics else { return .never }
        let unit = self.unit
        let name = topic.name
        return Signal(connect: { [topics] target in
            topics.subscribe(to: name, unit: unit) { json in
                if let value = try? JSONValueDecoder().decode(Value.self, from: json) { target.emit(value) }
            }
        })
    }
}

extension Page {
    /// Publishes each value of `values` on `topic`: every page subscribed to it, in this session (this page too,
    /// if it listens) and in every other live session on every node, receives it as an input of its session.
    ///
    /// A value goes out once the input that caused it is stored (acknowledged means stored), never while a log
    /// is replayed (what a replayed input published went out when it was live). A value JSON cannot hold (a
    /// non-finite number) is dropped. Publishing is an Output effect, like a route: the ViewModel's Output
    /// carries the values (a test records them) and the View wires them here.
    ///
    /// ```swift
    /// page.publish(output.post, on: .board)
    /// ```
    /// - Parameters:
    ///   - values: the values to publish.
    ///   - topic: where.
    public func publish<Value>(_ values: Signal<Value>, on topic: Topic<Value>) {
        let topics = turn.topics
        let name = topic.name
        values.subscribe { value in
            guard let json = try? JSONValueEncoder().encode(value) else { return }
            topics.queuePublication(TopicMessage(topic: name, value: json))
        }.disposed(by: subscriptions)
    }
}
