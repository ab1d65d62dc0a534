/// One query parameter, percent-decoded (`+` reads as a space).
public struct QueryItem: Sendable, Hashable {
    /// The parameter's name.
    public var name: String
    /// The parameter's value; `nil` for a bare name (`?flag`).
    public var value: String?

    /// Creates a query parameter.
    /// - Parameters:
    ///   - name: the name.
    ///   - value: the value, or `nil` for a bare name.
    public init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}

/// An HTTP request as MicroHTTP hands it to a handler: every part already read and decoded,
/// with no C types and no connection attached, so it can cross into a `Task`.
public struct HTTPRequest: Sendable {
    /// The method, upper case as sent (`GET`, `POST`, …).
    public var method: String
    /// The path exactly as received, still percent-encoded, without the query.
    public var rawPath: String
    /// The path's segments, each percent-decoded on its own (an encoded `/` stays inside its segment).
    public var pathSegments: [String]
    /// Values of the route pattern's `{name}` placeholders, decoded.
    public var pathParameters: PathParameters
    /// The query parameters, in order, decoded.
    public var query: [QueryItem]
    /// The header fields, in order.
    public var headers: HTTPHeaders
    /// Cookies sent with the request, by name.
    public var cookies: [String: String]
    /// The body, at most the configured limit.
    public var body: [UInt8]
    /// The peer's IP address (the direct peer: a proxy's address when behind one).
    public var remoteIP: IPAddress

    /// The peer's IP address as text (`127.0.0.1`, `::1`), or an empty string when unknown.
    public var remoteAddress: String { remoteIP.description }

    /// Creates a request; MicroHTTP makes these itself, tests and tools may too.
    /// - Parameters:
    ///   - method: the method.
    ///   - path: the raw path; it is split into segments and decoded (undecodable segments are kept as sent).
    ///   - query: the query parameters.
    ///   - headers: the header fields.
    ///   - cookies: the cookies.
    ///   - body: the body.
    ///   - remoteAddress: the peer's address.
    public init(
        method: String,
        path: String,
        query: [QueryItem] = [],
        headers: HTTPHeaders = HTTPHeaders(),
        cookies: [String: String] = [:],
        body: [UInt8] = [],
        remoteAddress: String = ""
    ) {
        self.method = method
        self.rawPath = path
        self.pathSegments = (try? PercentDecoding.pathSegments(of: Array(path.utf8))) ?? []
        self.pathParameters = PathParameters()
        self.query = query
        self.headers = headers
        self.cookies = cookies
        self.body = body
        self.remoteIP = IPAddress(remoteAddress) ?? .unknown
    }

    init(
        method: String,
        rawPath: String,
        pathSegments: [String],
        pathParameters: PathParameters,
        query: [QueryItem],
        headers: HTTPHeaders,
        cookies: [String: String],
        body: [UInt8],
        remoteIP: IPAddress
    ) {
        self.method = method
        self.rawPath = rawPath
        self.pathSegments = pathSegments
        self.pathParameters = pathParameters
        self.query = query
        self.headers = headers
        self.cookies = cookies
        self.body = body
        self.remoteIP = remoteIP
    }

    /// The value of the first query parameter with this name.
    /// - Parameter name: the parameter's name.
    /// - Returns: its value, or `nil` when absent or bare.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}
