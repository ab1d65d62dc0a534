import CNATS
import Locking

/// The topic bus of several nodes: core NATS subjects, `mvvmr.topic.<name>`, on a connection of its own to the
/// servers the JetStream session store uses.
///
/// Every node's ``TopicFanout`` holds one subscription per topic while any of its live sessions listens, so each
/// message reaches each node once and each listening session there once. Delivery is at most once, as topics
/// promise: a node that is away (or reconnecting) misses what is published meanwhile, and its sessions show what
/// arrives after. The connection echoes (NATS's default), so the publishing node's own sessions receive through the
/// bus like every other node's. nats.c calls each subscription's handler on a thread of its own, one message at a
/// time, in the order the server relays a publisher's messages.
///
/// ```swift
/// let bus = try NATSTopicBus(servers: ["nats://127.0.0.1:4222"])
/// let server = PageServer(units: units, root: .home, services: services, store: store, topicBus: bus)
/// ```
public final class NATSTopicBus: TopicBus, @unchecked Sendable {
    // @unchecked Sendable: `connection` is set once in `init` and destroyed once in `deinit`; nats.c's calls are
    // thread-safe; the subscription handles live under `subscriptions`' lock.

    private struct Subscription: @unchecked Sendable {
        // @unchecked Sendable: the handle is only used under the bus's lock.
        let handle: OpaquePointer
        let router: NATSMessageRouter
    }

    private struct State: Sendable {
        var subscriptions: [Int: Subscription] = [:]
        var nextID = 0
    }

    private let connection: OpaquePointer?
    private let state = Locked(State())
    private let subjectPrefix: String

    /// Connects to `servers` (reconnecting forever after a loss; it opens even while none can be reached).
    /// - Parameters:
    ///   - servers: `nats://host:port` URLs, as `SESSION_STORE=nats://…` lists them.
    ///   - subjectPrefix: what a topic's name follows in its subject.
    /// - Throws: ``SessionStoreError`` when the server list is unusable.
    public init(servers: [String], subjectPrefix: String = "mvvmr.topic.") throws(SessionStoreError) {
        connection = try NATSClient.connect(to: servers, name: "mvvmr-topics")
        self.subjectPrefix = subjectPrefix
    }

    deinit {
        let subscriptions = state.withLock { state in
            defer { state.subscriptions = [:] }
            return Array(state.subscriptions.values)
        }
        for subscription in subscriptions {
            subscription.router.route(to: nil)
            natsSubscription_Unsubscribe(subscription.handle)
            natsSubscription_Destroy(subscription.handle)
        }
        if let connection {
            natsConnection_Close(connection)
            natsConnection_Destroy(connection)
        }
    }

    /// Publishes `payload` on `topic`'s subject, without waiting (nats.c buffers it, also while reconnecting, up to
    /// its reconnect buffer; past that it is dropped, as at-most-once allows).
    /// - Parameters:
    ///   - payload: the message's bytes.
    ///   - topic: the topic's name (one subject token: ``TopicName/isValid(_:)``).
    public func publish(_ payload: [UInt8], on topic: String) {
        guard let connection else { return }
        let subject = subjectPrefix + topic
        _ = payload.withUnsafeBytes { bytes in
            natsConnection_Publish(connection, subject, bytes.baseAddress, Int32(bytes.count))
        }
    }

    /// Subscribes to `topic`'s subject: `handler` gets each message's payload on nats.c's thread for this
    /// subscription. nats.c subscribes again by itself after a reconnect. When nats.c refuses the subscription (the
    /// connection is closed), the returned subscription receives nothing.
    /// - Parameters:
    ///   - topic: the topic's name.
    ///   - handler: receives each payload.
    /// - Returns: what ends the subscription.
    public func subscribe(to topic: String, handler: @escaping @Sendable ([UInt8]) -> Void) -> TopicBusSubscription {
        let router = NATSMessageRouter()
        router.route { _, payload in handler(payload) }
        return state.withLock { state in
            state.nextID += 1
            let subscription = TopicBusSubscription(topic: topic, id: state.nextID)
            var handle: OpaquePointer?
            // The router is the closure pointer nats.c calls back with: retained for good (a handler may still be
            // running when the subscription is destroyed); `unsubscribe` only points it nowhere.
            let closure = Unmanaged.passRetained(router).toOpaque()
            if let connection,
                natsConnection_Subscribe(&handle, connection, subjectPrefix + topic, natsMessageHandler, closure) == NATS_OK,
                let handle
            {
                state.subscriptions[subscription.id] = Subscription(handle: handle, router: router)
            }
            return subscription
        }
    }

    /// Ends a subscription; ending one twice, or one nats.c refused, does nothing.
    /// - Parameter subscription: the subscription.
    public func unsubscribe(_ subscription: TopicBusSubscription) {
        guard let ended = state.withLock({ $0.subscriptions.removeValue(forKey: subscription.id) }) else { return }
        ended.router.route(to: nil)
        natsSubscription_Unsubscribe(ended.handle)
        natsSubscription_Destroy(ended.handle)
    }
}
