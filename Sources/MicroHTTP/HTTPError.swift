/// An error that becomes an HTTP response: a status, a stable machine-readable code and a message for
/// people. Every error MicroHTTP produces, and every one a handler throws, is rendered here, in one
/// place, as `{"error":{"code":…,"message":…,"details":…}}`.
///
/// ```swift
/// throw HTTPError(status: 404, code: "unknown_unit", message: "No unit named 'nope'.")
/// ```
public struct HTTPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The status code.
    public var status: Int
    /// The stable code clients branch on (`not_found`, `payload_too_large`, …).
    public var code: String
    /// A sentence for people; may change between versions.
    public var message: String
    /// Optional extra data, already encoded as a JSON value (`{"allowed":["a","b"]}`).
    public var detailsJSON: [UInt8]?
    /// Header fields to send with the error (`Allow`, `Retry-After`, …).
    public var headers: HTTPHeaders

    /// Creates an error.
    /// - Parameters:
    ///   - status: the status code.
    ///   - code: the stable code.
    ///   - message: the human message.
    ///   - detailsJSON: extra data as encoded JSON, or `nil`.
    ///   - headers: extra header fields.
    public init(status: Int, code: String, message: String, detailsJSON: [UInt8]? = nil, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.code = code
        self.message = message
        self.detailsJSON = detailsJSON
        self.headers = headers
    }

    /// `code (status): message`.
    public var description: String { "\(code) (\(status)): \(message)" }

    /// The JSON response for this error.
    public var response: HTTPResponse {
        var body: [UInt8] = []
        body.reserveCapacity(64 + message.utf8.count + (detailsJSON?.count ?? 0))
        body.append(contentsOf: #"{"error":{"code":"#.utf8)
        JSONText.appendString(code, to: &body)
        body.append(contentsOf: #","message":"#.utf8)
        JSONText.appendString(message, to: &body)
        if let detailsJSON {
            body.append(contentsOf: #","details":"#.utf8)
            body.append(contentsOf: detailsJSON)
        }
        body.append(contentsOf: "}}".utf8)
        var response = HTTPResponse.json(body, status: status)
        for field in headers { response.headers.add(name: field.name, value: field.value) }
        return response
    }

    /// 404 `not_found`: no such path.
    public static let notFound = HTTPError(status: 404, code: "not_found", message: "There is nothing at this path.")

    /// 405 `method_not_allowed`, with an `Allow` header listing what the path accepts.
    /// - Parameter allowed: the methods the path accepts.
    /// - Returns: the error.
    public static func methodNotAllowed(allowed: [String]) -> HTTPError {
        var details: [UInt8] = Array(#"{"allowed":["#.utf8)
        for (index, method) in allowed.enumerated() {
            if index > 0 { details.append(UInt8(ascii: ",")) }
            JSONText.appendString(method, to: &details)
        }
        details.append(contentsOf: "]}".utf8)
        return HTTPError(
            status: 405,
            code: "method_not_allowed",
            message: "This path accepts \(allowed.joined(separator: ", ")).",
            detailsJSON: details,
            headers: ["Allow": allowed.joined(separator: ", ")]
        )
    }

    /// An error for a limit the request met, with the limit as `details.limit`: the one shape of MicroHTTP's
    /// 413, 414, 429, 431 and 503 answers for limits.
    static func limitReached(status: Int, code: String, message: String, limit: Int, headers: HTTPHeaders) -> HTTPError {
        HTTPError(
            status: status, code: code, message: message, detailsJSON: Array(#"{"limit":\#(limit)}"#.utf8), headers: headers)
    }

    /// 413 `payload_too_large`: the body is over the configured limit; the connection closes after it.
    /// - Parameter limit: the limit in bytes.
    /// - Returns: the error.
    public static func payloadTooLarge(limit: Int) -> HTTPError {
        limitReached(
            status: 413, code: "payload_too_large", message: "The request body is larger than \(limit) bytes.", limit: limit,
            headers: ["Connection": "close"])
    }

    /// 400 `invalid_path`: the path cannot be decoded or names something that is never served
    /// (a NUL byte, an encoded separator, a dot segment).
    public static let invalidPath = HTTPError(
        status: 400, code: "invalid_path", message: "The request path is malformed or not allowed.")

    /// 500 `internal_error`: nothing about the cause is sent to the client.
    public static let internalError = HTTPError(
        status: 500, code: "internal_error", message: "The server failed to handle this request.")

    /// 503 `draining`: the server is shutting down.
    public static let draining = HTTPError(
        status: 503, code: "draining", message: "The server is shutting down; retry shortly.",
        headers: ["Retry-After": "1", "Connection": "close"])
}
