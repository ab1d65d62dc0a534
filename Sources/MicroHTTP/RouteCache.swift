#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
import Synchronization

/// How the last requests' paths were routed, per library thread: a request on a path seen lately (nearly every API
/// request: the same few paths again and again) is routed without decoding its path, building its segments and
/// text, or resolving it again. Each thread has its own cache, so nothing is locked or shared.
///
/// Routing is a function of the server's router, the method and the raw path alone (the router does not change once
/// the server is made), so an entry answers for exactly the same request. The cache is direct-mapped, with
/// ``slotCount`` slots: a path that lands on a taken slot replaces its entry, so a client sending many distinct paths
/// only misses, at the cost of hashing its path.
final class RouteCache {
    /// One path as it was routed.
    final class Entry {
        /// The server whose router resolved it (``RouteCache/newOwner()``).
        let owner: UInt64
        /// The raw path's bytes and their hash.
        let bytes: [UInt8]
        let hash: UInt64
        /// The method it was resolved for.
        let method: String
        /// The raw path as text, its decoded segments and the router's decision.
        let rawPath: String
        let segments: [String]
        let resolution: HTTPRouter.Resolution

        init(
            owner: UInt64, bytes: [UInt8], hash: UInt64, method: String, rawPath: String, segments: [String],
            resolution: HTTPRouter.Resolution
        ) {
            self.owner = owner
            self.bytes = bytes
            self.hash = hash
            self.method = method
            self.rawPath = rawPath
            self.segments = segments
            self.resolution = resolution
        }
    }

    /// How many paths a thread keeps (a power of two).
    static var slotCount: Int { 64 }
    /// The longest path kept, in bytes: a longer one is routed every time.
    static var longestPath: Int { 256 }

    private var slots: [Entry?] = Array(repeating: nil, count: RouteCache.slotCount)

    /// A number for a new server's entries, never given out before in this process: unlike the server's address, it
    /// cannot come back for another server while a thread still holds entries of the first.
    static func newOwner() -> UInt64 {
        nextOwner.add(1, ordering: .relaxed).oldValue
    }

    private static let nextOwner = Atomic<UInt64>(1)

    /// The calling thread's cache, made on its first use and released when the thread ends; nil when the process
    /// has no thread-local key to spare (the request is then routed without a cache).
    static var forCurrentThread: RouteCache? { perThread.current(making: RouteCache.init) }

    private static let perThread = ThreadLocalObject<RouteCache>()

    /// A hash of `bytes`, eight at a time (the path is a key of this cache only, never a table an attacker fills).
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        guard let base = bytes.baseAddress else { return hash }
        let raw = UnsafeRawPointer(base)
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = (hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
            hash ^= hash >> 29
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            tail |= UInt64(bytes[offset]) << shift
            shift += 8
            offset += 1
        }
        hash = (hash ^ tail) &* 0x9E37_79B9_7F4A_7C15
        return hash ^ (hash >> 32)
    }

    private static func slot(of hash: UInt64) -> Int {
        Int(truncatingIfNeeded: hash & UInt64(slotCount - 1))
    }

    /// The entry for `bytes` requested with `method` on `owner`'s router, if this thread routed it lately.
    func entry(owner: UInt64, bytes: UnsafeBufferPointer<UInt8>, hash: UInt64, method: String) -> Entry? {
        guard let entry = slots[Self.slot(of: hash)], entry.hash == hash, entry.owner == owner,
            entry.bytes.count == bytes.count, entry.method == method
        else { return nil }
        let same = entry.bytes.withUnsafeBufferPointer { kept in
            guard let keptBase = kept.baseAddress, let base = bytes.baseAddress else { return kept.count == bytes.count }
            return memcmp(keptBase, base, bytes.count) == 0
        }
        return same ? entry : nil
    }

    /// Keeps `entry`, in place of the entry in its slot (a path longer than ``longestPath`` is not kept).
    func keep(_ entry: Entry) {
        guard entry.bytes.count <= Self.longestPath else { return }
        slots[Self.slot(of: entry.hash)] = entry
    }
}
