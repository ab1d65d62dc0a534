/// What a handler answers: a status, header fields and a body.
public struct HTTPResponse: Sendable {
    /// The body of a response.
    public enum Body: Sendable {
        /// A complete body, sent with a `Content-Length`.
        case bytes([UInt8])
        /// An open-ended stream (Server-Sent Events): bytes go out as they are sent to the stream.
        case stream(EventStream)
    }

    /// The status code.
    public var status: Int
    /// The header fields (MicroHTTP adds `Content-Length` and `Date` itself).
    public var headers: HTTPHeaders
    /// The body.
    public var body: Body

    /// Creates a response.
    /// - Parameters:
    ///   - status: the status code.
    ///   - headers: the header fields.
    ///   - body: the body.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response from already encoded bytes.
    /// - Parameters:
    ///   - bytes: UTF-8 JSON text.
    ///   - status: the status code, 200 by default.
    /// - Returns: the response, with `Content-Type: application/json`.
    public static func json(_ bytes: [UInt8], status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: .bytes(bytes))
    }

    /// A plain text response.
    /// - Parameters:
    ///   - text: the body.
    ///   - status: the status code, 200 by default.
    /// - Returns: the response, with `Content-Type: text/plain; charset=utf-8`.
    public static func text(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: .bytes(Array(text.utf8)))
    }

    /// A Server-Sent Events response streaming `stream`, with the headers proxies need to pass it through
    /// unbuffered.
    /// - Parameter stream: the stream; events sent to it before or after this call reach the client in order.
    /// - Returns: the response.
    public static func eventStream(_ stream: EventStream) -> HTTPResponse {
        HTTPResponse(
            status: 200,
            headers: [
                "Content-Type": "text/event-stream; charset=utf-8",
                "Cache-Control": "no-cache, no-store",
                "X-Accel-Buffering": "no",
            ],
            body: .stream(stream)
        )
    }
}
