import Locking

/// The live sessions of a server, by id, with the bookkeeping that decides which go first.
///
/// A session is *idle* while it has no open event stream. Idle sessions sit in one of two
/// least-recently-used lists: those that made only one request (a drive-by `GET`, a crawler) and those
/// that came back. When the table is full, a new session evicts the least recently used idle session of
/// the first list, else of the second; when no session is idle, the new one is refused. Expiry walks the
/// same lists from their oldest end, so both eviction and expiry cost O(1) per session touched.
final class SessionTable<Entry: Sendable>: Sendable {
    private final class Node {
        let identifier: String
        let entry: Entry
        var lastActive: ContinuousClock.Instant
        var requestCount = 1
        var openStreams = 0
        var list: ListKind?
        var previous: Node?
        var next: Node?

        init(identifier: String, entry: Entry, lastActive: ContinuousClock.Instant) {
            self.identifier = identifier
            self.entry = entry
            self.lastActive = lastActive
        }
    }

    private enum ListKind {
        case singleRequest, returning
    }

    /// A doubly linked list, oldest first. Links are strong both ways (a weak link would cost a side table per
    /// session); every removal unlinks, and the table's deinit breaks what is left.
    private struct List {
        var oldest: Node?
        var newest: Node?

        mutating func append(_ node: Node) {
            node.previous = newest
            node.next = nil
            newest?.next = node
            newest = node
            if oldest == nil { oldest = node }
        }

        mutating func remove(_ node: Node) {
            let before = node.previous
            let after = node.next
            if let after { after.previous = before } else { newest = before }
            if let before { before.next = after } else { oldest = after }
            node.previous = nil
            node.next = nil
        }
    }

    private struct State {
        var nodes: [String: Node] = [:]
        var singleRequest = List()
        var returning = List()

        mutating func unlink(_ node: Node) {
            switch node.list {
            case .singleRequest: singleRequest.remove(node)
            case .returning: returning.remove(node)
            case nil: break
            }
            node.list = nil
        }

        mutating func link(_ node: Node) {
            guard node.openStreams == 0 else { return }
            if node.requestCount > 1 {
                returning.append(node)
                node.list = .returning
            } else {
                singleRequest.append(node)
                node.list = .singleRequest
            }
        }
    }

    /// The most sessions kept.
    let capacity: Int
    private let state = Locked(State())
    private let clock = ContinuousClock()

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    deinit {
        state.withLock { state in
            for node in state.nodes.values {
                node.previous = nil
                node.next = nil
            }
            state.singleRequest = List()
            state.returning = List()
        }
    }

    /// The number of live sessions.
    var count: Int { state.withLock { $0.nodes.count } }

    /// Adds a session. When full, evicts the least recently used idle session (one-request sessions first).
    /// - Returns: the evicted entry, if any; `nil` as the whole result when nothing could be evicted.
    func insert(_ entry: Entry, identifier: String) -> (inserted: Bool, evicted: Entry?) {
        let now = clock.now
        return state.withLock { state in
            var evicted: Entry?
            if state.nodes.count >= capacity {
                guard let victim = state.singleRequest.oldest ?? state.returning.oldest else {
                    return (false, nil)
                }
                state.unlink(victim)
                state.nodes[victim.identifier] = nil
                evicted = victim.entry
            }
            let node = Node(identifier: identifier, entry: entry, lastActive: now)
            state.nodes[identifier] = node
            state.link(node)
            return (true, evicted)
        }
    }

    /// Looks a session up for a request, counting the request and marking it used now.
    func touch(_ identifier: String) -> Entry? {
        let now = clock.now
        return state.withLock { state in
            guard let node = state.nodes[identifier] else { return nil }
            node.requestCount += 1
            node.lastActive = now
            // Already the newest of the returning sessions (a client reading again and again): nothing moves.
            if node.list != nil && !(node.list == .returning && state.returning.newest === node) {
                state.unlink(node)
                state.link(node)
            }
            return node.entry
        }
    }

    /// Looks a session up without counting a request.
    func peek(_ identifier: String) -> Entry? {
        state.withLock { $0.nodes[identifier]?.entry }
    }

    /// Notes that an event stream of this session opened: it is not idle while any is open.
    func streamOpened(_ identifier: String) {
        let now = clock.now
        state.withLock { state in
            guard let node = state.nodes[identifier] else { return }
            node.openStreams += 1
            node.lastActive = now
            state.unlink(node)
        }
    }

    /// Notes that an event stream of this session closed; the idle clock starts again from now.
    func streamClosed(_ identifier: String) {
        let now = clock.now
        state.withLock { state in
            guard let node = state.nodes[identifier], node.openStreams > 0 else { return }
            node.openStreams -= 1
            node.lastActive = now
            if node.openStreams == 0 {
                state.unlink(node)
                state.link(node)
            }
        }
    }

    /// Removes a session.
    func remove(_ identifier: String) -> Entry? {
        state.withLock { state in
            guard let node = state.nodes.removeValue(forKey: identifier) else { return nil }
            state.unlink(node)
            return node.entry
        }
    }

    /// Removes and returns every idle session unused for `timeToLive` or longer.
    func removeExpired(timeToLive: Duration) -> [Entry] {
        let now = clock.now
        return state.withLock { state in
            var expired: [Entry] = []
            for kind in [ListKind.singleRequest, .returning] {
                while let oldest = kind == .singleRequest ? state.singleRequest.oldest : state.returning.oldest,
                    now - oldest.lastActive >= timeToLive
                {
                    state.unlink(oldest)
                    state.nodes[oldest.identifier] = nil
                    expired.append(oldest.entry)
                }
            }
            return expired
        }
    }

    /// The ids of the sessions with an event stream open: they never go idle here, however long since their last
    /// input (a sweep keeps their activity fresh in a store other nodes sweep too).
    func identifiersWithOpenStreams() -> [String] {
        state.withLock { state in state.nodes.compactMap { $0.value.openStreams > 0 ? $0.key : nil } }
    }

    /// Every entry (for shutdown and metrics).
    func allEntries() -> [Entry] {
        state.withLock { $0.nodes.values.map(\.entry) }
    }
}
