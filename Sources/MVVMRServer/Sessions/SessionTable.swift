import Locking
import Synchronization

/// The live sessions of a server, by id, with the bookkeeping that decides which go first.
///
/// A session is *idle* while it has no open event stream. Idle sessions sit in one of two
/// least-recently-used lists: those that made only one request (a drive-by `GET`, a crawler) and those
/// that came back. When the table is full, a new session evicts the least recently used idle session of
/// the first list, else of the second; when no session is idle, the new one is refused. Expiry walks the
/// same lists from their oldest end, so both eviction and expiry cost O(1) per session touched.
///
/// The table is split into ``shardCount`` shards by a hash of the id, each with its own lock, its own map and its
/// own two lists, so that requests for different sessions take different locks: no lock is taken by every request.
/// Only the number of sessions is shared (an atomic counter, which is what the capacity is held to). A full table
/// evicts the least recently used idle session of all the shards (their oldest ends compared, one shard's lock at a
/// time), so eviction and expiry behave as one table's would.
final class SessionTable<Entry: Sendable>: Sendable {
    private final class Node {
        let identifier: String
        let entry: Entry
        var lastActive: ContinuousClock.Instant
        /// The open event streams (a session holds a few at most: ``SessionLimits/streamsPerSession``).
        var openStreams: Int32 = 0
        /// Whether a request came after the one that made the session (which list it idles in). Beside
        /// `openStreams` and `list`: the three share one word of the node.
        var hasReturned = false
        /// Whether ``takeIdle(for:)`` handed the session out since its last request.
        var wasHandedOutIdle = false
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

    /// One shard's sessions and lists.
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
            if node.hasReturned {
                returning.append(node)
                node.list = .returning
            } else {
                singleRequest.append(node)
                node.list = .singleRequest
            }
        }
    }

    /// How many shards the table has: sixteen (the top four bits of a hash pick one), more than a machine's request
    /// threads usually are.
    static var shardCount: Int { 16 }

    /// The most sessions kept.
    let capacity: Int
    private let shards: [Locked<State>]
    /// How many sessions the shards hold together (a slot is taken before a session goes into its shard).
    private let sessionCount = Atomic<Int>(0)
    private let clock = ContinuousClock()

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        shards = (0..<Self.shardCount).map { _ in Locked(State()) }
    }

    deinit {
        for shard in shards {
            shard.withLock { state in
                for node in state.nodes.values {
                    node.previous = nil
                    node.next = nil
                }
                state.singleRequest = List()
                state.returning = List()
            }
        }
    }

    /// The shard that holds `identifier`: from a hash of its first eight bytes (ids are random, so their first bytes
    /// spread evenly, and a hash over all of a client's bytes would cost more than the lookup it spares).
    private func shard(_ identifier: String) -> Locked<State> {
        shards[Self.shardIndex(of: identifier)]
    }

    /// The index of the shard that holds `identifier`: its first eight bytes read as one number, times the golden
    /// ratio's fraction (Fibonacci hashing), whose top bits depend on all of them.
    static func shardIndex(of identifier: String) -> Int {
        var first: UInt64 = 0
        let read: Void? = identifier.utf8.withContiguousStorageIfAvailable { bytes in
            withUnsafeMutableBytes(of: &first) { word in
                for index in 0..<min(8, bytes.count) { word[index] = bytes[index] }
            }
        }
        if read == nil {
            withUnsafeMutableBytes(of: &first) { word in
                for (index, byte) in identifier.utf8.prefix(8).enumerated() { word[index] = byte }
            }
        }
        return Int(truncatingIfNeeded: (first &* 0x9E37_79B9_7F4A_7C15) >> 60)
    }

    /// The number of live sessions.
    var count: Int { sessionCount.load(ordering: .relaxed) }

    /// Adds a session. When full, evicts the least recently used idle session (one-request sessions first).
    /// - Returns: the evicted entry, if any; `inserted` false (nothing changed) when nothing could be evicted.
    func insert(_ entry: Entry, identifier: String) -> (inserted: Bool, evicted: Entry?) {
        var evicted: Entry?
        // The evicted session's slot becomes the new one's.
        if !takeSlot() {
            guard let victim = evictLeastRecentlyUsedIdle() else { return (false, nil) }
            evicted = victim
        }
        let now = clock.now
        let replaced = shard(identifier).withLock { state -> Bool in
            let node = Node(identifier: identifier, entry: entry, lastActive: now)
            let previous = state.nodes.updateValue(node, forKey: identifier)
            if let previous { state.unlink(previous) }
            state.link(node)
            return previous != nil
        }
        // An id already present (never issued twice, but a restore may race one): its old node's slot is given back.
        if replaced { sessionCount.subtract(1, ordering: .relaxed) }
        return (true, evicted)
    }

    /// Takes a slot for a new session: false when the table is full.
    private func takeSlot() -> Bool {
        sessionCount.incrementIfBelow(capacity)
    }

    /// Removes the least recently used idle session of all the shards, one-request sessions first, keeping its slot
    /// for the caller: nil when no session is idle.
    private func evictLeastRecentlyUsedIdle() -> Entry? {
        for kind in [ListKind.singleRequest, .returning] {
            // A shard's oldest may be used or removed between the look and the eviction: then the shard's next oldest
            // goes, or another look is taken.
            for _ in 0..<3 {
                var oldest: (shard: Int, lastActive: ContinuousClock.Instant)?
                for (index, shard) in shards.enumerated() {
                    let candidate = shard.withLock { state in
                        (kind == .singleRequest ? state.singleRequest.oldest : state.returning.oldest)?.lastActive
                    }
                    if let candidate, oldest.map({ candidate < $0.lastActive }) ?? true { oldest = (index, candidate) }
                }
                guard let oldest else { break }
                let victim = shards[oldest.shard].withLock { state -> Entry? in
                    guard let node = kind == .singleRequest ? state.singleRequest.oldest : state.returning.oldest else {
                        return nil
                    }
                    state.unlink(node)
                    state.nodes[node.identifier] = nil
                    return node.entry
                }
                if let victim { return victim }
            }
        }
        return nil
    }

    /// Looks a session up for a request, counting the request and marking it used now.
    func touch(_ identifier: String) -> Entry? {
        let now = clock.now
        return shard(identifier).withLock { state in
            guard let node = state.nodes[identifier] else { return nil }
            node.hasReturned = true
            node.wasHandedOutIdle = false
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
        shard(identifier).withLock { $0.nodes[identifier]?.entry }
    }

    /// Notes that an event stream of this session opened: it is not idle while any is open.
    func streamOpened(_ identifier: String) {
        let now = clock.now
        shard(identifier).withLock { state in
            guard let node = state.nodes[identifier] else { return }
            node.openStreams += 1
            node.lastActive = now
            state.unlink(node)
        }
    }

    /// Notes that an event stream of this session closed; the idle clock starts again from now.
    func streamClosed(_ identifier: String) {
        let now = clock.now
        shard(identifier).withLock { state in
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
        let removed = shard(identifier).withLock { state -> Entry? in
            guard let node = state.nodes.removeValue(forKey: identifier) else { return nil }
            state.unlink(node)
            return node.entry
        }
        if removed != nil { sessionCount.subtract(1, ordering: .relaxed) }
        return removed
    }

    /// Removes and returns every idle session unused for `timeToLive` or longer (shard by shard, each shard's oldest
    /// first).
    func removeExpired(timeToLive: Duration) -> [Entry] {
        let now = clock.now
        var expired: [Entry] = []
        for shard in shards {
            shard.withLock { state in
                for kind in [ListKind.singleRequest, .returning] {
                    while let oldest = kind == .singleRequest ? state.singleRequest.oldest : state.returning.oldest,
                        now - oldest.lastActive >= timeToLive
                    {
                        state.unlink(oldest)
                        state.nodes[oldest.identifier] = nil
                        expired.append(oldest.entry)
                    }
                }
            }
        }
        if !expired.isEmpty { sessionCount.subtract(expired.count, ordering: .relaxed) }
        return expired
    }

    /// The sessions with no request for `idleTime` or longer (an open event stream or not), each once per idle spell:
    /// a session handed out is not handed out again until a request came for it.
    func takeIdle(for idleTime: Duration) -> [Entry] {
        let now = clock.now
        return shards.flatMap { shard in
            shard.withLock { state in
                state.nodes.values.compactMap { node -> Entry? in
                    guard !node.wasHandedOutIdle, now - node.lastActive >= idleTime else { return nil }
                    node.wasHandedOutIdle = true
                    return node.entry
                }
            }
        }
    }

    /// Hands the session out again at the next ``takeIdle(for:)`` while it stays idle (what kept its pages awake was
    /// passing: a timer, an async job).
    func retryIdle(_ identifier: String) {
        shard(identifier).withLock { state in state.nodes[identifier]?.wasHandedOutIdle = false }
    }

    /// The ids of the sessions with an event stream open: they never go idle here, however long since their last
    /// input (a sweep keeps their activity fresh in a store other nodes sweep too).
    func identifiersWithOpenStreams() -> [String] {
        shards.flatMap { shard in
            shard.withLock { state in state.nodes.compactMap { $0.value.openStreams > 0 ? $0.key : nil } }
        }
    }

    /// Every entry (for shutdown and metrics).
    func allEntries() -> [Entry] {
        shards.flatMap { shard in shard.withLock { $0.nodes.values.map(\.entry) } }
    }
}
