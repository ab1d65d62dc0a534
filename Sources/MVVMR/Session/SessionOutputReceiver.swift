/// Receives what a session's inputs produce for the world outside it (input records, events, topic events), in
/// input order, one call at a time, once the step that produced them released the session's lock: the object form
/// of ``PageSession/setRecorder(_:)``, ``PageSession/setEventSink(_:)`` and ``PageSession/setTopicListener(_:)``.
///
/// A session holds its receiver weakly, so an object that owns the session can receive from it without a cycle,
/// and with no closure kept per session (a server holds thousands of idle sessions). Which of the three it is handed
/// is chosen with ``SessionOutputKinds`` in ``PageSession/setReceiver(_:for:)``; the other methods are not called.
public protocol SessionOutputReceiver: AnyObject, Sendable {
    /// An input's record, numbered and timed, with the events the input caused (as a recorder receives them).
    /// - Parameters:
    ///   - record: the input's record.
    ///   - events: the events it caused, in order.
    func sessionRecorded(_ record: InputRecord, events: [SessionEvent])
    /// An event (as an event sink receives it).
    /// - Parameter event: the event.
    func sessionProduced(_ event: SessionEvent)
    /// A topic the session started or stopped listening to, or a value it published (as a topic listener
    /// receives it).
    /// - Parameter event: the topic event.
    func sessionTopicChanged(_ event: TopicEvent)
}

/// Which of a session's outputs a ``SessionOutputReceiver`` is handed.
public struct SessionOutputKinds: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: UInt8

    /// The kinds of `rawValue`'s bits.
    /// - Parameter rawValue: the bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Every input's record with its events (``SessionOutputReceiver/sessionRecorded(_:events:)``).
    public static let records = SessionOutputKinds(rawValue: 1)
    /// Every event as it happens (``SessionOutputReceiver/sessionProduced(_:)``).
    public static let events = SessionOutputKinds(rawValue: 2)
    /// Topic subscriptions and publications (``SessionOutputReceiver/sessionTopicChanged(_:)``).
    public static let topics = SessionOutputKinds(rawValue: 4)
}
