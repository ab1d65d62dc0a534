/// The code that answers a route.
public enum RouteHandler: Sendable {
    /// Answers on the library's thread, without waiting. For work that is quick and never blocks.
    case synchronous(@Sendable (HTTPRequest) throws -> HTTPResponse)
    /// Answers from a `Task`. The connection is suspended while the work runs, so no library thread
    /// waits; it is resumed to send the response.
    case asynchronous(@Sendable (HTTPRequest) async throws -> HTTPResponse)
    /// Runs on the library's thread and either answers at once (returns a response) or returns nil and
    /// answers later, from any thread, through the ``DeferredResponder`` (the connection is suspended
    /// meanwhile, so no library thread waits). For work whose answer waits on something else, such as a
    /// disk commit, without the cost of a `Task` when it does not.
    case deferred(@Sendable (HTTPRequest, DeferredResponder) throws -> HTTPResponse?)
}

/// The way a ``RouteHandler/deferred(_:)`` handler answers later: the first answer wins; later ones, and
/// answers after the server stopped waiting (it answered 503 itself at shutdown), are ignored.
///
/// A value holding the request (no object of its own is made per request); copies answer the same request.
public struct DeferredResponder: Sendable {
    /// The request answered. Not the server: completing needs nothing of the server's (a request still waiting when
    /// the server stops was answered 503 by it, so a later answer finds it answered).
    private let context: RequestContext

    init(context: RequestContext) {
        self.context = context
    }

    private func answer(_ response: HTTPResponse, _ kept: (any AnyObject & Sendable)?) {
        HTTPServer.complete(context, with: response, keeping: kept)
    }

    /// Sends `response` for the request.
    /// - Parameter response: the answer.
    public func respond(_ response: HTTPResponse) {
        answer(response, nil)
    }

    /// Sends `response` for the request, and keeps `kept` until the library's thread has taken the response, which
    /// then releases it: memory that the library's thread allocated for the request (its body, headers, closures)
    /// and that `kept` holds is then freed there, not on the thread that answers. (Freed on another thread, it leaves
    /// the allocator's per-thread cache of the library's thread empty, and each of its allocations slower.)
    /// - Parameters:
    ///   - response: the answer.
    ///   - kept: what to release on the library's thread once the response was taken.
    public func respond(_ response: HTTPResponse, keepingUntilSent kept: any AnyObject & Sendable) {
        answer(response, kept)
    }
}
