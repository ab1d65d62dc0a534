import JSONPatch
import Locking
import MVVMR

/// This node's side of the topics: which live sessions listen to which topic, one bus subscription per topic
/// while any does, and each message handed to each of them as an input.
///
/// Lock order: the fan-out's lock, then the bus's (a bus subscription is made or ended under the fan-out's lock,
/// so the count of listeners and the bus subscription agree). No session's lock is ever taken under the fan-out's:
/// a delivery copies the listeners, releases the lock, then hands the message to each session in turn (each under
/// its own lock, through the session's step). A session tells the fan-out what it listens to from its topic
/// listener, which runs outside the session's lock.
final class TopicFanout: Sendable {
    /// A listening session, held weakly: a session dropped without being released stops receiving.
    private struct Listener {
        weak var session: ServerSession?
    }

    private struct TopicState {
        var listeners: [ObjectIdentifier: Listener] = [:]
        var subscription: TopicBusSubscription?
    }

    /// The largest message this node publishes or takes from the bus, as JSON text (64 KiB): a page's values come
    /// from action values (16 KiB at most by default); anything larger on the bus is some other publisher's.
    static let maxPayloadBytes = 65_536

    let bus: any TopicBus
    private let topics = Locked<[String: TopicState]>([:])
    /// Counts messages published and messages handed to sessions.
    private let published: Counter?
    private let delivered: Counter?

    init(bus: any TopicBus, published: Counter? = nil, delivered: Counter? = nil) {
        self.bus = bus
        self.published = published
        self.delivered = delivered
    }

    /// `session` listens to `topic` from now on; the first listener on this node subscribes the node to the bus.
    func add(_ session: ServerSession, to topic: String) {
        guard TopicName.isValid(topic) else { return }
        let bus = self.bus
        topics.withLock { topics in
            var state = topics[topic] ?? TopicState()
            state.listeners[ObjectIdentifier(session)] = Listener(session: session)
            if state.subscription == nil {
                state.subscription = bus.subscribe(to: topic) { [weak self] payload in
                    self?.deliver(payload, on: topic)
                }
            }
            topics[topic] = state
        }
    }

    /// `session` no longer listens to `topic`; the last listener on this node ends the node's bus subscription.
    func remove(_ session: ServerSession, from topic: String) {
        let bus = self.bus
        topics.withLock { topics in
            guard var state = topics[topic] else { return }
            state.listeners[ObjectIdentifier(session)] = nil
            state.listeners = state.listeners.filter { $0.value.session != nil }
            if state.listeners.isEmpty {
                if let subscription = state.subscription { bus.unsubscribe(subscription) }
                topics[topic] = nil
            } else {
                topics[topic] = state
            }
        }
    }

    /// Publishes `message` on the bus (every listener on every node gets it, this node's too).
    func publish(_ message: TopicMessage) {
        guard TopicName.isValid(message.topic) else { return }
        let payload = message.value.jsonBytes
        guard payload.count <= Self.maxPayloadBytes else { return }
        published?.increment()
        bus.publish(payload, on: message.topic)
    }

    /// The sessions listening to `topic` on this node (tests).
    func listenerCount(of topic: String) -> Int {
        topics.withLock { $0[topic]?.listeners.values.filter { $0.session != nil }.count ?? 0 }
    }

    /// Hands a message from the bus to every session listening to `topic`, each as an input of its own.
    private func deliver(_ payload: [UInt8], on topic: String) {
        // A payload that is not JSON, or too large (another node's bug, a foreign publisher), is dropped.
        guard payload.count <= Self.maxPayloadBytes, let value = try? JSONValue(parsing: payload, maxDepth: 64) else {
            return
        }
        let sessions = topics.withLock { topics in topics[topic]?.listeners.values.compactMap(\.session) ?? [] }
        let message = TopicMessage(topic: topic, value: value)
        for session in sessions where session.receive(message) { delivered?.increment() }
    }
}
