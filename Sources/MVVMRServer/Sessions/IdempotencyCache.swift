import JSONPatch
import MVVMR

/// The responses of one session's actions that carried an `Idempotency-Key`, so a retry returns the first
/// response instead of delivering the action again.
///
/// Each response is kept for `retention`, and never dropped sooner: dropping a live entry would let its
/// retry apply the action twice. So the cache is bounded by refusing instead: at most `capacity` keys and
/// `byteLimit` bytes (each entry's key and response body, and ``entryOverheadBytes`` for the rest, counted as
/// entries come and go). Entries older than the retention go first; when the cache is still full, ``admit(key:now:)``
/// says so and when room will come. A response is stored whatever its size once its action ran, so the
/// bytes held may pass the limit by the one response that took the last room.
struct IdempotencyCache {
    struct Entry {
        let unit: String
        /// The request body's hash (`JSONValue`'s, consistent with its `==`: key order and spacing do not
        /// count), not the body itself: a body the server does not read (extra members) would otherwise be kept
        /// at many times the bytes it was counted as. A collision could only make one client's retry with a
        /// different body, under the same key of its own session, replay instead of being refused.
        let requestDigest: UInt64
        /// The number of the input record the action made, so a replayed answer too waits until it is stored.
        let inputNumber: Int?
        let status: Int
        let body: [UInt8]
        let storedAt: ContinuousClock.Instant
        let byteCount: Int
    }

    enum Lookup {
        case miss
        case replay(status: Int, body: [UInt8], inputNumber: Int?)
        case conflict
    }

    enum Admission: Equatable {
        case admitted
        /// Full of live entries; the oldest expires in this many seconds.
        case full(retryAfterSeconds: Int)
    }

    let retention: Duration
    let capacity: Int
    let byteLimit: Int
    private var entries: [String: Entry] = [:]
    /// Keys oldest first (entries are stored in time order, so expiry only ever looks at the front).
    private var order: [String] = []
    /// The bytes of the kept entries.
    private(set) var byteCount = 0

    init(retention: Duration = .seconds(600), capacity: Int = 2048, byteLimit: Int = 262_144) {
        self.retention = retention
        self.capacity = max(1, capacity)
        self.byteLimit = max(0, byteLimit)
    }

    /// What an entry costs besides its key and response body: its unit name reference, digest, time, status and
    /// the dictionary's and order list's slots for it.
    static let entryOverheadBytes = 48

    /// The number of keys kept.
    var count: Int { entries.count }

    /// Looks a key up for a request to `unit` with the parsed body `request` (compared as JSON values, so key
    /// order and spacing do not matter).
    func lookup(key: String, unit: String, requestDigest: UInt64) -> Lookup {
        guard let entry = entries[key] else { return .miss }
        guard entry.unit == unit, entry.requestDigest == requestDigest else { return .conflict }
        return .replay(status: entry.status, body: entry.body, inputNumber: entry.inputNumber)
    }

    /// A digest of a request's body that is the same in every process (the session's log keeps it, so a
    /// session restored after a restart still tells a retry from a different request under the same key).
    /// Members of an object count in any order, like the JSON values' own equality.
    static func digest(of request: JSONValue) -> UInt64 {
        var digest = StableDigest()
        combine(request, into: &digest)
        return digest.value
    }

    private static func combine(_ value: JSONValue, into digest: inout StableDigest) {
        switch value {
        case .object(let object):
            digest.combine(0x7b)
            for (key, member) in object.sorted(by: { $0.key < $1.key }) {
                digest.combine(key.utf8.count)
                digest.combine(key.utf8)
                combine(member, into: &digest)
            }
            digest.combine(0x7d)
        case .array(let elements):
            digest.combine(0x5b)
            digest.combine(elements.count)
            for element in elements { combine(element, into: &digest) }
        default:
            digest.combine(value.jsonBytes)
        }
    }

    /// Whether a new key may be stored now: expired entries go first; a cache still full of live ones refuses.
    mutating func admit(key: String, now: ContinuousClock.Instant) -> Admission {
        dropExpired(now: now)
        if entries.count < capacity, byteCount + key.utf8.count + Self.entryOverheadBytes <= byteLimit { return .admitted }
        guard let oldest = order.first.flatMap({ entries[$0] }) else { return .full(retryAfterSeconds: 1) }
        let remaining = retention - (now - oldest.storedAt)
        return .full(retryAfterSeconds: max(1, Int(remaining.components.seconds) + 1))
    }

    /// Keeps an action's response for its key.
    mutating func store(
        key: String, unit: String, requestDigest: UInt64, status: Int, body: [UInt8], inputNumber: Int?,
        now: ContinuousClock.Instant
    ) {
        let byteCount = key.utf8.count + Self.entryOverheadBytes + body.count
        if let replaced = entries.updateValue(
            Entry(
                unit: unit, requestDigest: requestDigest, inputNumber: inputNumber, status: status, body: body,
                storedAt: now, byteCount: byteCount),
            forKey: key)
        {
            self.byteCount -= replaced.byteCount
            order.removeAll { $0 == key }
        }
        order.append(key)
        self.byteCount += byteCount
        dropExpired(now: now)
    }

    /// The kept entries with their keys, oldest first (a session snapshot keeps them).
    var keptEntries: [(key: String, entry: Entry)] {
        order.compactMap { key in entries[key].map { (key, $0) } }
    }

    /// Drops the entries older than the retention (only those).
    mutating func dropExpired(now: ContinuousClock.Instant) {
        var dropped = 0
        for key in order {
            guard let entry = entries[key], now - entry.storedAt >= retention else { break }
            entries[key] = nil
            byteCount -= entry.byteCount
            dropped += 1
        }
        if dropped > 0 { order.removeFirst(dropped) }
    }
}
