/// What one session may hold, from the server's configuration: the bounds that keep a single client from
/// exhausting the server's memory (docs/PROTOCOL.md, "Limits").
struct SessionLimits: Sendable, Equatable {
    /// The longest `Idempotency-Key`, in UTF-8 bytes.
    var idempotencyKeyBytes = 255
    /// The most keys the idempotency cache holds.
    var idempotencyKeys = 2048
    /// The bytes the idempotency cache holds: each entry's key, request body and response body.
    var idempotencyBytes = 262_144
    /// How long an idempotent response is kept (and so, at least, a retry replays it).
    var idempotencyRetention = Duration.seconds(600)
    /// The most events the event log keeps.
    var eventLogCount = 256
    /// The bytes of the events the event log keeps (as SSE frames, or their estimate when not framed).
    var eventLogBytes = 262_144
    /// The bytes of patches each page keeps for catching up a client that is behind (besides their count,
    /// 64); a client further behind gets a snapshot.
    var pageHistoryBytes = 65_536
    /// The largest action `value`, as compact JSON text.
    var actionValueBytes = 16_384
    /// The bytes the session may hold in all: its pages' views and patch histories, event log and
    /// idempotency cache.
    var sessionBytes = 1_048_576
    /// The most open event streams of the session.
    var streamsPerSession = 8

    /// The event log's bounds: ``eventLogCount`` events, ``eventLogBytes`` bytes.
    var eventLogBounds: EventLog.Bounds { EventLog.Bounds(count: eventLogCount, bytes: eventLogBytes) }

    /// The defaults.
    init() {}

    /// The limits a server's settings give.
    init(_ configuration: ServerConfiguration) {
        idempotencyKeyBytes = configuration.maxIdempotencyKeyBytes
        idempotencyBytes = configuration.maxIdempotencyBytesPerSession
        eventLogCount = configuration.eventLogSize
        eventLogBytes = configuration.maxEventLogBytes
        pageHistoryBytes = configuration.maxPageHistoryBytes
        actionValueBytes = configuration.maxActionValueBytes
        sessionBytes = configuration.maxSessionBytes
        streamsPerSession = configuration.maxStreamsPerSession
    }
}
