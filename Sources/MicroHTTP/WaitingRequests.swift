import Locking
import Synchronization

/// The requests whose answers come later (asynchronous and deferred handlers, their connections suspended), so that
/// a stopping server can answer each one still waiting. Split into shards by the request's identity, each with its
/// own lock, so that the two library threads adding and removing requests at once take different locks: every page
/// read and action passes through here.
///
/// Admission and stopping agree through the shards' locks: a request is admitted only while the table is open, read
/// under its shard's lock, and ``closeAndList()`` closes the table before it takes each shard's lock, so every
/// request it does not list was refused.
final class WaitingRequests: Sendable {
    /// How many shards the table has (eight: the top three bits of a hash pick one).
    static var shardCount: Int { 8 }

    private let shards: [Locked<[ObjectIdentifier: RequestContext]>]
    private let isOpen = Atomic<Bool>(false)

    init() {
        shards = (0..<Self.shardCount).map { _ in Locked([:]) }
    }

    private func shard(_ key: ObjectIdentifier) -> Locked<[ObjectIdentifier: RequestContext]> {
        // The address times the golden ratio's fraction (Fibonacci hashing): its top bits depend on every bit of the
        // address, where its low bits alone would be the same for objects allocated a power of two apart.
        shards[Int(truncatingIfNeeded: (UInt64(UInt(bitPattern: key)) &* 0x9E37_79B9_7F4A_7C15) >> 61)]
    }

    /// Lets requests in (the server is running).
    func open() {
        isOpen.store(true, ordering: .relaxed)
    }

    /// Whether requests are still let in: false once a stopping server has listed those waiting. A deferred request is
    /// refused before its handler runs when it is false, as an asynchronous one is by ``admit(_:)``.
    var isAdmitting: Bool { isOpen.load(ordering: .relaxed) }

    /// Adds `context`, unless the table was closed.
    /// - Returns: whether it was added.
    func admit(_ context: RequestContext) -> Bool {
        let key = ObjectIdentifier(context)
        return shard(key).withLock { contexts in
            guard isOpen.load(ordering: .relaxed) else { return false }
            contexts[key] = context
            return true
        }
    }

    /// Removes `context` (its request was answered, or its connection closed).
    func remove(_ context: RequestContext) {
        let key = ObjectIdentifier(context)
        shard(key).withLock { _ = $0.removeValue(forKey: key) }
    }

    /// Admits no more requests, and lists those waiting now.
    func closeAndList() -> [RequestContext] {
        isOpen.store(false, ordering: .relaxed)
        return shards.flatMap { shard in shard.withLock { Array($0.values) } }
    }

    /// Whether no request is waiting.
    var isEmpty: Bool { shards.allSatisfy { shard in shard.withLock { $0.isEmpty } } }
}
