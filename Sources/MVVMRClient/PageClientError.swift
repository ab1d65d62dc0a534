import JSONPatch

/// Why a ``PageClient`` call failed.
public enum PageClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call needs a session and none is open: call ``PageClient/openSession(at:parameters:)`` first.
    case noSession
    /// The client holds no page to send the action to (no unit given and an empty stack).
    case noPage
    /// The server answered with a protocol error (`4xx`, or `5xx` after the retries).
    case server(ServerErrorInfo)
    /// The server no longer knew the session; the client opened this new session at the page it was on.
    /// The request was not delivered (a failed request changes nothing on the server).
    case sessionRecovered(String)
    /// The request could not reach the server after every attempt.
    case transport(String)
    /// The server's answer is not the protocol's.
    case invalidResponse(String)

    /// A sentence for people.
    public var description: String {
        switch self {
        case .noSession: "No session is open."
        case .noPage: "The client holds no page to send the action to."
        case .server(let info): "The server answered \(info.status) \(info.code): \(info.message)"
        case .sessionRecovered(let session): "The session was lost; a new one was opened (\(session.prefix(6))…)."
        case .transport(let message): "The server could not be reached: \(message)"
        case .invalidResponse(let message): "The server's answer is not the protocol's: \(message)"
        }
    }
}

/// A protocol error as the server sent it: `{"error": {"code", "message", "details"}}`.
public struct ServerErrorInfo: Sendable, Hashable {
    /// The HTTP status (`422`).
    public var status: Int
    /// The stable error code (`unknown_action`).
    public var code: String
    /// The message for people; it may change.
    public var message: String
    /// Extra facts (`{"allowed": [...]}` for `unknown_action`), if any.
    public var details: JSONValue?
    /// The `Retry-After` the server asked for, in seconds, if any.
    public var retryAfter: Double?

    /// Creates an error description.
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - code: the protocol's error code.
    ///   - message: the message.
    ///   - details: extra facts.
    ///   - retryAfter: the `Retry-After` in seconds.
    public init(status: Int, code: String, message: String, details: JSONValue? = nil, retryAfter: Double? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.retryAfter = retryAfter
    }
}
