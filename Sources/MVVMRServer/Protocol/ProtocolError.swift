import JSONPatch
import MVVMR
import MicroHTTP

/// The page protocol's errors: each code with its HTTP status, rendered as JSON in one place
/// (``ProtocolError/httpError``).
public struct ProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stable code (`unknown_action`, `unknown_session`, …).
    public var code: String
    /// The HTTP status.
    public var status: Int
    /// A message for people.
    public var message: String
    /// Extra data (`{"allowed": […]}`), or `nil`.
    public var details: JSONValue?
    /// Extra header fields (`Retry-After`, `Allow`).
    public var headers: [HTTPHeader]

    /// Creates an error.
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - code: the stable code.
    ///   - message: the human message.
    ///   - details: extra data.
    ///   - headers: extra header fields.
    public init(status: Int, code: String, message: String, details: JSONValue? = nil, headers: [HTTPHeader] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers
    }

    /// `code (status): message`.
    public var description: String { "\(code) (\(status)): \(message)" }

    /// The HTTP error MicroHTTP renders as `{"error":{"code","message","details"}}`.
    public var httpError: HTTPError {
        HTTPError(status: status, code: code, message: message, detailsJSON: details?.jsonBytes, headers: HTTPHeaders(headers))
    }

    /// 400 `invalid_json`.
    static func invalidJSON(_ message: String) -> ProtocolError {
        ProtocolError(status: 400, code: "invalid_json", message: "The body is not JSON: \(message)")
    }

    /// 400 `invalid_request`.
    static func invalidRequest(_ message: String) -> ProtocolError {
        ProtocolError(status: 400, code: "invalid_request", message: message)
    }

    /// 403 `forbidden_origin`.
    static let forbiddenOrigin = ProtocolError(
        status: 403, code: "forbidden_origin", message: "Requests that change state are not allowed from this origin.")

    /// 404 `unknown_session`.
    static let unknownSession = ProtocolError(
        status: 404, code: "unknown_session", message: "The session is unknown or has expired; create a new one.")

    /// 404 `unknown_unit`.
    static func unknownUnit(_ name: String) -> ProtocolError {
        ProtocolError(status: 404, code: "unknown_unit", message: "There is no unit named '\(name)'.")
    }

    /// 422 `idempotency_key_reused`.
    static let idempotencyKeyReused = ProtocolError(
        status: 422, code: "idempotency_key_reused",
        message: "This Idempotency-Key was already used in this session for another unit or body.")

    /// 429 `rate_limited`.
    static func rateLimited(retryAfter seconds: Int) -> ProtocolError {
        ProtocolError(
            status: 429, code: "rate_limited", message: "Too many new sessions from this address; retry later.",
            details: ["retry_after": .int(seconds)], headers: [HTTPHeader(name: "Retry-After", value: String(seconds))])
    }

    /// 503 `overloaded`.
    static let overloaded = ProtocolError(
        status: 503, code: "overloaded", message: "The server holds as many sessions as it may; retry later.",
        headers: [HTTPHeader(name: "Retry-After", value: "5")])

    /// 503 `store_unavailable`: the session store could not keep the input, so it was not applied (nothing
    /// of it is acknowledged); reads of live pages still work. Retry: the same `Idempotency-Key` is safe.
    static let storeUnavailable = ProtocolError(
        status: 503, code: "store_unavailable",
        message: "The session store cannot keep this request now, so it was not applied; retry shortly.",
        headers: [HTTPHeader(name: "Retry-After", value: "1")])

    /// 403 `session_log_disabled`: the server does not serve session logs (`SESSION_LOG=off`).
    static let sessionLogDisabled = ProtocolError(
        status: 403, code: "session_log_disabled",
        message: "This server does not serve session logs (SESSION_LOG=off).")

    /// 503 `draining`.
    static let draining = ProtocolError(
        status: 503, code: "draining", message: "The server is shutting down; retry shortly.",
        headers: [HTTPHeader(name: "Retry-After", value: "1")])

    /// The protocol error for a session's refusal.
    init(_ error: PageError) {
        var details: JSONValue?
        let status: Int
        switch error.code {
        case .unknownUnit: status = 404
        case .unknownAction:
            status = 422
            details = ["allowed": .array(error.allowed.map { .string($0) })]
        case .invalidValue: status = 422
        case .pageNotBound: status = 409
        case .invalidRequest: status = 400
        case .entryRefused:
            status = 403
            details = ["unit": .string(error.unit ?? "")]
        case .nothingForward: status = 409
        case .bindingFailed, .missingService:
            // A ViewModel or View failed: an internal error; the code is kept so operators can tell why.
            self.init(status: 500, code: "internal_error", message: "The page could not be built.", details: ["reason": .string(error.code.rawValue)])
            return
        }
        self.init(status: status, code: error.code.rawValue, message: error.message, details: details)
    }
}
