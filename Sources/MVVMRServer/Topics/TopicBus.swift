/// The transport of topic messages between nodes: what a cluster-wide topic needs from a message system.
///
/// A bus carries opaque payloads (a value's JSON text) on named topics to every subscriber on every node, the
/// publishing node included. The server holds at most one bus subscription per topic per node, made when the
/// first live session on the node subscribes to the topic and ended when the last one leaves (``TopicFanout``
/// hands each message to the node's subscribing sessions), so a bus sees per-node interest, not per-session.
///
/// ```swift
/// let server = PageServer(units: units, root: .home, services: services, topicBus: InProcessTopicBus())
/// ```
///
/// What an implementation promises:
/// - `publish` does not block on the subscribers (it queues or hands the payload to the network) and may be
///   called from any thread, including a session store's completion.
/// - A handler is called on the bus's own thread (or task), never inside `publish`, `subscribe` or
///   `unsubscribe`, and one call at a time per subscription, with the messages of one publisher in the order
///   they were published.
/// - After `unsubscribe` returns, the handler may still run for a message already being delivered, never for
///   one published later.
///
/// A NATS implementation maps a topic to the core (not JetStream) subject `mvvmr.topic.<name>` (names are one
/// subject token: ``TopicName/isValid(_:)``): `publish` is `natsConnection_Publish`, `subscribe` is
/// `natsConnection_Subscribe` with a callback (nats.c calls it on the subscription's own thread, one message at a
/// time, as promised above), `unsubscribe` is `natsSubscription_Unsubscribe` then `natsSubscription_Destroy`. The
/// connection must echo (nats.c's default; no `natsOptions_SetNoEcho`): this node's own sessions get their
/// messages through the bus like every other node's, never by a local short cut. At-most-once delivery is what
/// topics promise of the bus (a session that misses a message while it is away catches up on what its node's
/// fan-out kept, and otherwise shows what arrives after).
public protocol TopicBus: Sendable {
    /// Publishes `payload` on `topic`, to every subscriber on every node.
    /// - Parameters:
    ///   - payload: the message's bytes (a value's compact JSON text).
    ///   - topic: the topic's name.
    func publish(_ payload: [UInt8], on topic: String)

    /// Calls `handler` with every message published on `topic` from now on, until ``unsubscribe(_:)``.
    /// - Parameters:
    ///   - topic: the topic's name.
    ///   - handler: receives each message's bytes, on the bus's thread.
    /// - Returns: what ends the subscription.
    func subscribe(to topic: String, handler: @escaping @Sendable ([UInt8]) -> Void) -> TopicBusSubscription

    /// Ends a subscription made by ``subscribe(to:handler:)``; ending one twice does nothing.
    /// - Parameter subscription: the subscription.
    func unsubscribe(_ subscription: TopicBusSubscription)
}

/// One subscription of a ``TopicBus``: its topic and a number the bus gave it.
public struct TopicBusSubscription: Sendable, Hashable {
    /// The topic subscribed to.
    public let topic: String
    /// The bus's number for it (unique within the bus).
    public let id: Int

    /// A subscription, as a bus hands it out.
    /// - Parameters:
    ///   - topic: the topic.
    ///   - id: the bus's number for it.
    public init(topic: String, id: Int) {
        self.topic = topic
        self.id = id
    }
}
