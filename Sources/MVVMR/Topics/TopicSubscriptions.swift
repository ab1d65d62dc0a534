import JSONPatch

/// The topic subscriptions of one session's pages, and the publications of the input being applied: lives inside
/// the session's lock, like everything else the session owns.
///
/// A page's `context.messages(on:)` registers here when its stream is connected (the page is bound) and leaves when
/// the page is released. Which topics have at least one subscriber is what the session tells the server
/// (``TopicEvent/subscribed(_:)`` / ``TopicEvent/unsubscribed(_:)``), so the server subscribes this session to the bus
/// while it has a reason to.
/// Hears, inside the session's lock, when a topic gains its first subscriber among a session's pages or loses its
/// last.
protocol TopicInterestListener: AnyObject {
    /// `topic` has a subscriber now (`subscribed`), or none any more.
    func topicInterestChanged(_ topic: String, subscribed: Bool)
}

final class TopicSubscriptions {
    /// One page's handler of one topic.
    private struct Handler {
        let id: Int
        /// The unit of the page that subscribed.
        let unit: String
        let deliver: (JSONValue) -> Void
    }

    private var handlers: [String: [Handler]] = [:]
    private var nextID = 0
    /// The values published by pages during the input being applied, in order.
    private(set) var publications: [TopicMessage] = []
    /// The names that are not topic names (``TopicName/isValid(_:)``) pages tried to listen to since the last
    /// ``takeInvalidNames()``: a page binding with one fails, as it would fail on a server whose bus cannot carry it.
    private var invalidNames: [String] = []
    /// Told, inside the lock, when a topic gains its first subscriber or loses its last: the turn's listener, set
    /// and cleared with it (unowned, see ``SessionTurn/topicInterestListener``).
    unowned(unsafe) var interestListener: (any TopicInterestListener)?

    /// The topics with at least one subscriber, sorted.
    var topics: [String] { handlers.keys.sorted() }

    /// The units of the pages subscribed to `topic`, in subscription order (a unit once).
    func units(subscribedTo topic: String) -> [String] {
        var units: [String] = []
        for handler in handlers[topic] ?? [] where !units.contains(handler.unit) { units.append(handler.unit) }
        return units
    }

    /// Registers `deliver` for `topic` on behalf of the page of `unit`, until the subscription is disposed.
    func subscribe(to topic: String, unit: String, deliver: @escaping (JSONValue) -> Void) -> Subscription {
        guard TopicName.isValid(topic) else {
            invalidNames.append(topic)
            return .empty
        }
        let id = nextID
        nextID &+= 1
        let isFirst = handlers[topic, default: []].isEmpty
        handlers[topic, default: []].append(Handler(id: id, unit: unit, deliver: deliver))
        if isFirst { interestListener?.topicInterestChanged(topic, subscribed: true) }
        return Subscription { [weak self] in self?.unsubscribe(id, from: topic) }
    }

    private func unsubscribe(_ id: Int, from topic: String) {
        guard var list = handlers[topic] else { return }
        list.removeAll { $0.id == id }
        if list.isEmpty {
            handlers[topic] = nil
            interestListener?.topicInterestChanged(topic, subscribed: false)
        } else {
            handlers[topic] = list
        }
    }

    /// Hands `value` to every handler of `topic`, in subscription order (a handler that a delivery removes is
    /// skipped; one it adds waits for the next message).
    func deliver(_ value: JSONValue, on topic: String) {
        let current = handlers[topic] ?? []
        for handler in current where handlers[topic]?.contains(where: { $0.id == handler.id }) == true {
            handler.deliver(value)
        }
    }

    /// Takes the invalid names pages tried to listen to since the last call.
    func takeInvalidNames() -> [String] {
        if invalidNames.isEmpty { return [] }
        defer { invalidNames = [] }
        return invalidNames
    }

    /// Queues a value a page published during the input being applied.
    func queuePublication(_ message: TopicMessage) {
        publications.append(message)
    }

    /// Drops the values published after the first `count` (what a page bound again published: it did so when it was
    /// first bound).
    func dropPublications(after count: Int) {
        if publications.count > count { publications.removeLast(publications.count - count) }
    }

    /// Whether the page of `unit` listens to any topic.
    func hasSubscriptions(of unit: String) -> Bool {
        handlers.values.contains { list in list.contains { $0.unit == unit } }
    }

    /// Takes the values published since the last call.
    func takePublications() -> [TopicMessage] {
        if publications.isEmpty { return [] }
        defer { publications = [] }
        return publications
    }
}
