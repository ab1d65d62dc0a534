import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One `GET /api/events` connection: a `URLSessionDataDelegate` that hands the response head and the
/// body chunks, as they arrive, to an `AsyncThrowingStream` (`URLSession.bytes(for:)` is not available on
/// every platform). The stream finishes when the connection ends, throwing when it failed.
final class EventStreamConnection: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    enum Input: Sendable {
        case response(status: Int, headers: [String: String])
        case bytes(Data)
    }

    let inputs: AsyncThrowingStream<Input, any Error>
    private let continuation: AsyncThrowingStream<Input, any Error>.Continuation
    private let request: URLRequest
    private let idleTimeout: TimeInterval
    private let state = ClientLock<(session: URLSession?, task: URLSessionDataTask?, cancelled: Bool)>((nil, nil, false))

    /// The session id the connection was opened for.
    let sessionID: String

    init(request: URLRequest, sessionID: String, idleTimeout: TimeInterval) {
        self.request = request
        self.sessionID = sessionID
        self.idleTimeout = idleTimeout
        (inputs, continuation) = AsyncThrowingStream.makeStream(of: Input.self, throwing: (any Error).self)
        super.init()
        continuation.onTermination = { [weak self] _ in self?.cancel() }
    }

    /// Opens the connection.
    func start() {
        let configuration = URLSessionPageTransport.sessionConfiguration(timeout: idleTimeout)
        configuration.timeoutIntervalForResource = .infinity
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        let task = session.dataTask(with: request)
        let started = state.withLock { state -> Bool in
            if state.cancelled { return false }
            state.session = session
            state.task = task
            return true
        }
        if started {
            task.resume()
        } else {
            session.invalidateAndCancel()
            continuation.finish(throwing: CancellationError())
        }
    }

    /// Closes the connection (the stream finishes with an error).
    func cancel() {
        let (session, task) = state.withLock { state -> (URLSession?, URLSessionDataTask?) in
            state.cancelled = true
            defer {
                state.session = nil
                state.task = nil
            }
            return (state.session, state.task)
        }
        task?.cancel()
        session?.invalidateAndCancel()
        continuation.finish(throwing: CancellationError())
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if let http = response as? HTTPURLResponse {
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
            }
            continuation.yield(.response(status: http.statusCode, headers: headers))
        } else {
            continuation.yield(.response(status: 0, headers: [:]))
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        continuation.yield(.bytes(data))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error {
            continuation.finish(throwing: error)
        } else {
            continuation.finish()
        }
        session.finishTasksAndInvalidate()
        state.withLock { state in
            state.session = nil
            state.task = nil
        }
    }
}
