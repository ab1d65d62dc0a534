/// The code that answers a route.
public enum RouteHandler: Sendable {
    /// Answers on the library's thread, without waiting. For work that is quick and never blocks.
    case synchronous(@Sendable (HTTPRequest) throws -> HTTPResponse)
    /// Answers from a `Task`. The connection is suspended while the work runs, so no library thread
    /// waits; it is resumed to send the response.
    case asynchronous(@Sendable (HTTPRequest) async throws -> HTTPResponse)
}
