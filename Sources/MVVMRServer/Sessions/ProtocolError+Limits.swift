import JSONPatch
import MicroHTTP

/// The errors of the per-session and per-client bounds. Each says which limit was reached
/// (`details.limit`), so a client can tell a bound from a bug.
extension ProtocolError {
    /// 400 `invalid_idempotency_key`: the key is longer than the limit.
    static func invalidIdempotencyKey(limit: Int) -> ProtocolError {
        ProtocolError(
            status: 400, code: "invalid_idempotency_key",
            message: "The Idempotency-Key is longer than \(limit) bytes.", details: ["limit": .int(limit)])
    }

    /// 429 `idempotency_cache_full`: the session's idempotency cache holds as much as it may and nothing in
    /// it is old enough to go (dropping a live entry would let its retry apply the action twice).
    static func idempotencyCacheFull(limit: Int, retryAfter seconds: Int) -> ProtocolError {
        ProtocolError(
            status: 429, code: "idempotency_cache_full",
            message:
                "This session holds as many idempotent responses as it may; retry later, or send the action without a key.",
            details: ["limit": .int(limit), "retry_after": .int(seconds)],
            headers: [HTTPHeader(name: "Retry-After", value: String(seconds))])
    }

    /// 413 `value_too_large`: the action's value, as compact JSON, is longer than the limit.
    static func valueTooLarge(limit: Int) -> ProtocolError {
        ProtocolError(
            status: 413, code: "value_too_large",
            message: "The action's value is larger than \(limit) bytes of JSON.", details: ["limit": .int(limit)])
    }

    /// 413 `session_too_large`: the session holds as many bytes as it may; actions are refused until it
    /// holds less (navigate back, or start a new session).
    static func sessionTooLarge(limit: Int) -> ProtocolError {
        ProtocolError(
            status: 413, code: "session_too_large",
            message: "This session holds as much as it may (\(limit) bytes); navigate back or start a new session.",
            details: ["limit": .int(limit)])
    }

    /// 429 `too_many_streams`: the session, or the client's address, has as many open event streams as it
    /// may (`details.scope`: `session` or `address`).
    static func tooManyStreams(scope: String, limit: Int) -> ProtocolError {
        ProtocolError(
            status: 429, code: "too_many_streams",
            message: "Too many open event streams for this \(scope); close one first.",
            details: ["scope": .string(scope), "limit": .int(limit)],
            headers: [HTTPHeader(name: "Retry-After", value: "5")])
    }
}
