import JSONPatch

/// One value published on a topic, as it crosses sessions and nodes: the topic's name, the value as JSON, and the
/// id its publishing node gave it.
public struct TopicMessage: Sendable, Hashable {
    /// The topic's name.
    public let topic: String
    /// The value, as JSON.
    public let value: JSONValue
    /// What tells this message from every other (random, given once when it is published; nil for a message made in a
    /// test, or read from a log written before messages had ids). A session records it with the message's input, so
    /// a message that reaches it twice (live and again when it catches up after a restore) is taken once.
    public let id: String?

    /// A message on `topic` carrying `value`.
    /// - Parameters:
    ///   - topic: the topic's name.
    ///   - value: the value, as JSON.
    ///   - id: the message's id, if it has one.
    public init(topic: String, value: JSONValue, id: String? = nil) {
        self.topic = topic
        self.value = value
        self.id = id
    }

    /// The key of a topic input record's annotation that holds the message's id.
    public static let idAnnotationKey = "topic_message_id"

    /// The annotation a topic input's record carries: the message's id, or nil when it has none.
    public var recordAnnotation: JSONValue? {
        id.map { .object([Self.idAnnotationKey: .string($0)]) }
    }

    /// The id a topic input record's annotation holds, or nil.
    /// - Parameter annotation: the record's annotation.
    public static func id(inAnnotation annotation: JSONValue?) -> String? {
        annotation?[idAnnotationKey]?.stringValue
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
