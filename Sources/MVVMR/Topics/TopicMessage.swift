import JSONPatch

/// One value published on a topic, as it crosses sessions and nodes: the topic's name and the value as JSON.
public struct TopicMessage: Sendable, Hashable {
    /// The topic's name.
    public let topic: String
    /// The value, as JSON.
    public let value: JSONValue

    /// A message on `topic` carrying `value`.
    /// - Parameters:
    ///   - topic: the topic's name.
    ///   - value: the value, as JSON.
    public init(topic: String, value: JSONValue) {
        self.topic = topic
        self.value = value
    }
}

/// What a session tells the world about its topics, in input order, once the step that caused it released the
/// session's lock: see ``PageSession/setTopicListener(_:)``.
public enum TopicEvent: Sendable, Hashable {
    /// A page of the session subscribed to `topic`, and none did before: messages on it are wanted from now on.
    case subscribed(String)
    /// The last page subscribed to `topic` was released (or stopped listening): none are wanted any more.
    case unsubscribed(String)
    /// A page published `message` while input `input` was applied. Whoever carries it to the topic's
    /// subscribers waits until that input's record is stored (acknowledged means stored).
    case published(TopicMessage, input: Int)
}
