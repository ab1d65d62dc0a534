import JSONPatch
import Locking
import MVVMR

/// A message a node's fan-out keeps for a while, with when it came (the wall clock).
struct RecentTopicMessage: Sendable {
    let message: TopicMessage
    /// When the bus brought it, since 1970.
    let arrived: Duration
    /// Its payload's size on the bus.
    let bytes: Int
}

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
    fileprivate struct Listener {
        weak var session: ServerSession?
    }

    fileprivate struct TopicState {
        var listeners: [ObjectIdentifier: Listener] = [:]
        var subscription: TopicBusSubscription?
        /// The last messages the bus brought on this topic, oldest first (at most ``recentLimit``, and at most
        /// ``recentByteLimit`` bytes of payloads), and their payloads' bytes.
        var recent: [RecentTopicMessage] = []
        var recentBytes = 0
    }

    /// How many of a topic's last messages the node keeps while it is subscribed: what a session restored here
    /// catches up on (the messages after the last one its log holds, that it missed while it was away).
    static let recentLimit = 256
    /// The most payload bytes a node keeps of one topic's recent messages (256 KiB: 256 messages of 1 KiB).
    static let recentByteLimit = 262_144

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
    /// - Returns: the topic's last messages on this node before `session` was added, oldest first (every later one
    ///   is handed to it).
    @discardableResult
    func add(_ session: ServerSession, to topic: String) -> [RecentTopicMessage] {
        guard TopicName.isValid(topic) else { return [] }
        let bus = self.bus
        return topics.withLock { topics in
            var state = topics[topic] ?? TopicState()
            state.listeners[ObjectIdentifier(session)] = Listener(session: session)
            if state.subscription == nil {
                state.subscription = bus.subscribe(to: topic) { [weak self] payload in
                    self?.deliver(payload, on: topic)
                }
            }
            topics[topic] = state
            return state.recent
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

    /// Publishes `message` on the bus (every listener on every node gets it, this node's too), with a new id.
    func publish(_ message: TopicMessage) {
        guard TopicName.isValid(message.topic) else { return }
        let payload = Self.payload(of: message.value, id: Self.newID())
        guard payload.count <= Self.maxPayloadBytes else { return }
        published?.increment()
        bus.publish(payload, on: message.topic)
    }

    /// A message's bytes on the bus: `{"id":"…","value":…}` (compact JSON), the id 16 hexadecimal digits.
    static func payload(of value: JSONValue, id: String) -> [UInt8] {
        JSONValue.object(["id": .string(id), "value": value]).jsonBytes
    }

    /// The message `payload` carries on `topic`, or nil when it is not JSON (or too large). A payload of another
    /// shape than `{"id":…,"value":…}` (a node of an earlier version, another publisher) is a value without an id:
    /// taken as it comes, and never caught up on.
    static func message(from payload: [UInt8], on topic: String) -> TopicMessage? {
        guard payload.count <= maxPayloadBytes, let parsed = try? JSONValue(parsing: payload, maxDepth: 64) else {
            return nil
        }
        guard case .object(let members) = parsed, members.count == 2,
            let id = members["id"]?.stringValue, isValidID(id), let value = members["value"]
        else { return TopicMessage(topic: topic, value: parsed) }
        return TopicMessage(topic: topic, value: value, id: id)
    }

    /// A new message id: 64 random bits as 16 lowercase hexadecimal digits.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = String(generator.next() as UInt64, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Whether `id` is one this format allows: 1 to 64 letters, digits, `-` or `_`.
    static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && TopicName.isValid(id)
    }

    /// The sessions listening to `topic` on this node (tests).
    func listenerCount(of topic: String) -> Int {
        topics.withLock { $0[topic]?.listeners.values.filter { $0.session != nil }.count ?? 0 }
    }

    /// Hands a message from the bus to every session listening to `topic`, each as an input of its own, and keeps
    /// it among the topic's recent ones.
    private func deliver(_ payload: [UInt8], on topic: String) {
        // A payload not of this format, or too large (another node's bug, a foreign publisher), is dropped.
        guard let message = Self.message(from: payload, on: topic) else { return }
        let arrived = SystemTime.sinceEpoch()
        let sessions = topics.withLock { topics -> [ServerSession] in
            guard topics[topic] != nil else { return [] }
            // In place: a copy of the state would copy its kept messages with every message.
            topics[topic]?.keep(RecentTopicMessage(message: message, arrived: arrived, bytes: payload.count))
            return topics[topic]?.listeners.values.compactMap(\.session) ?? []
        }
        for session in sessions where session.receive(message) { delivered?.increment() }
    }
}

extension TopicFanout.TopicState {
    /// Keeps `message` as the newest recent one, letting the oldest go past the count and byte limits.
    fileprivate mutating func keep(_ message: RecentTopicMessage) {
        recent.append(message)
        recentBytes += message.bytes
        var dropped = 0
        while recent.count - dropped > TopicFanout.recentLimit
            || (recentBytes > TopicFanout.recentByteLimit && recent.count - dropped > 1)
        {
            recentBytes -= recent[dropped].bytes
            dropped += 1
        }
        if dropped > 0 { recent.removeFirst(dropped) }
    }
}
