/// The responses of one session's actions that carried an `Idempotency-Key`, so a retry returns the first
/// response instead of delivering the action again. Kept for at least `retention`; at most `capacity`
/// keys (the oldest go first once older than the retention, else the cache refuses to grow past twice the
/// capacity by dropping the oldest).
import JSONPatch

struct IdempotencyCache {
    struct Entry {
        let unit: String
        let request: JSONValue
        let status: Int
        let body: [UInt8]
        let storedAt: ContinuousClock.Instant
    }

    enum Lookup {
        case miss
        case replay(status: Int, body: [UInt8])
        case conflict
    }

    let retention: Duration
    let capacity: Int
    private var entries: [String: Entry] = [:]
    private var order: [String] = []

    init(retention: Duration = .seconds(600), capacity: Int = 1024) {
        self.retention = retention
        self.capacity = capacity
    }

    /// Looks a key up for a request to `unit` with the parsed body `request` (compared as JSON values, so key
    /// order and spacing do not matter).
    func lookup(key: String, unit: String, request: JSONValue) -> Lookup {
        guard let entry = entries[key] else { return .miss }
        guard entry.unit == unit, entry.request == request else { return .conflict }
        return .replay(status: entry.status, body: entry.body)
    }

    mutating func store(key: String, unit: String, request: JSONValue, status: Int, body: [UInt8], now: ContinuousClock.Instant) {
        if entries[key] == nil { order.append(key) }
        entries[key] = Entry(unit: unit, request: request, status: status, body: body, storedAt: now)
        prune(now: now)
    }

    private mutating func prune(now: ContinuousClock.Instant) {
        var dropped = 0
        for key in order {
            guard let entry = entries[key] else {
                dropped += 1
                continue
            }
            let expired = now - entry.storedAt >= retention
            let overflowing = order.count - dropped > 2 * capacity
            guard expired || overflowing else { break }
            entries[key] = nil
            dropped += 1
        }
        if dropped > 0 { order.removeFirst(dropped) }
    }
}
