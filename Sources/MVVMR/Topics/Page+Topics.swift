import JSONPatch

extension Page {
    /// Publishes each value of `values` on `topic`: every page subscribed to it, in this session (this page too,
    /// if it listens) and in every other live session on every node, receives it as an input of its session.
    ///
    /// A value goes out once the input that caused it is stored (acknowledged means stored), never while a log
    /// is replayed (what a replayed input published went out when it was live). A value JSON cannot hold (a
    /// non-finite number) is dropped. A topic whose name is not valid (``TopicName/isValid(_:)``) fails the binding
    /// (`binding_failed`). Publishing is an Output effect, like a route: the ViewModel's Output
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
        guard TopicName.isValid(name) else {
            document.recordBindingFailure("\"\(name)\" is not a topic name (letters, digits, - and _)")
            return
        }
        values.subscribe { value in
            guard let json = try? JSONValueEncoder().encode(value) else { return }
            topics.queuePublication(TopicMessage(topic: name, value: json))
        }.disposed(by: subscriptions)
    }

    /// Queues each message of `messages` for publication (a reducer's `Effect.publish`).
    func publish(_ messages: Signal<TopicMessage>) {
        let topics = turn.topics
        messages.subscribe { topics.queuePublication($0) }.disposed(by: subscriptions)
    }
}
