import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An HTTP answer as a ``PageTransport`` returns it.
public struct TransportResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The response headers, names in lower case.
    public var headers: [String: String]
    /// The response body.
    public var body: Data

    /// Creates a response; header names are lowered.
    /// - Parameters:
    ///   - status: the HTTP status code.
    ///   - headers: the headers.
    ///   - body: the body.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        self.headers = lowered
        self.body = body
    }

    /// The value of a header, whatever the case of `name`.
    /// - Parameter name: the header's name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Sends one HTTP request and returns the answer: how a ``PageClient`` makes its requests (the event
/// stream aside). Throw for network failures (they are retried when the request is safe to repeat);
/// return every HTTP answer, errors included.
public protocol PageTransport: Sendable {
    /// Sends `request` and returns the server's answer.
    /// - Parameter request: the request, with its method, headers and body set.
    /// - Returns: the answer, whatever its status.
    /// - Throws: when no answer came (connection refused or lost, timeout).
    func send(_ request: URLRequest) async throws -> TransportResponse
}

/// The default transport: a `URLSession` with no cookies and no cache (the client sends its session
/// as `X-Session-ID`).
public final class URLSessionPageTransport: PageTransport {
    private let session: URLSession

    /// Creates a transport over its own `URLSession`.
    /// - Parameter timeout: the time a request may take.
    public init(timeout: TimeInterval = 30) {
        session = URLSession(configuration: Self.sessionConfiguration(timeout: timeout))
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends the request with `URLSession`.
    /// - Parameter request: the request.
    /// - Returns: the answer.
    /// - Throws: `URLError` when no answer came.
    public func send(_ request: URLRequest) async throws -> TransportResponse {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return TransportResponse(status: http.statusCode, headers: headers, body: data)
    }

    static func sessionConfiguration(timeout: TimeInterval) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout
        return configuration
    }
}
