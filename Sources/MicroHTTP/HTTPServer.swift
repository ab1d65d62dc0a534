internal import CMicroHTTPD
import Locking
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An HTTP/1.1 server over libmicrohttpd: a pool of epoll threads, routes answered synchronously on
/// those threads or asynchronously from `Task`s (the connection is suspended meanwhile), streaming
/// responses for Server-Sent Events, bounded bodies and connections, deadlines for a request's headers and body
/// (kept, with departed event-stream clients, by a ``ConnectionWatcher`` thread), and a graceful stop.
///
/// ```swift
/// var router = HTTPRouter()
/// router.get("/healthz") { _ in .json(Array(#"{"status":"ok"}"#.utf8)) }
/// var configuration = HTTPServerConfiguration()
/// configuration.port = 0
/// let server = HTTPServer(configuration: configuration, router: router)
/// try server.start()
/// print("listening on \(server.port)")
/// server.stop(gracePeriod: .seconds(5))
/// ```
public final class HTTPServer: Sendable {
    private enum Phase: Equatable {
        case idle, running, draining, forcing, stopped
    }

    private struct Lifecycle {
        var phase: Phase = .idle
        var daemon: DaemonHandle?
        var port = 0
        var streams: [ObjectIdentifier: EventStream] = [:]
        var heartbeat: Task<Void, Never>?
        /// Streams MicroHTTP serves itself (taken over from the library, which no longer counts their
        /// connections), in all and per client address: held to `maxConnections` and `maxConnectionsPerIP`.
        var takenOverStreams = 0
        /// MicroHTTP's own engine, when it serves in place of the library (``HTTPServerConfiguration/Engine/epoll``).
        var engine: EpollEngine?
        var takenOverStreamsByAddress: [IPAddress: Int] = [:]
    }

    /// Whether a stream may be taken over from the library, as decided under the lifecycle lock.
    enum StreamAdmission {
        case admitted
        /// Over a limit: answered with this error instead of the stream.
        case refused(HTTPError)
        /// Not running: the library serves it, and it is ended at once (`register`).
        case leftToTheLibrary
    }

    /// The configuration the server was created with.
    public let configuration: HTTPServerConfiguration
    let router: HTTPRouter
    /// This server's number in the library threads' route caches (``RouteCache``).
    private let routeCacheOwner = RouteCache.newOwner()
    private let lifecycle = Locked(Lifecycle())
    /// The requests waiting for an asynchronous or deferred answer (not in `lifecycle`: every request passes there).
    let waiting = WaitingRequests()
    private let activeRequests = Atomic<Int>(0)
    /// Connections MicroHTTP's own engine closed for missing a deadline.
    let connectionsCutByEngine = Atomic<Int>(0)
    private let draining = Atomic<Bool>(false)
    /// Request deadlines, and clients leaving suspended event streams; see ``ConnectionWatcher``.
    let watcher: ConnectionWatcher

    /// Creates a server; nothing listens until ``start()``.
    /// - Parameters:
    ///   - configuration: where to listen and the limits.
    ///   - router: the routes.
    public init(configuration: HTTPServerConfiguration, router: HTTPRouter) {
        var configuration = configuration
        if let chosen = getenv("MICROHTTP_ENGINE"), let engine = HTTPServerConfiguration.Engine(rawValue: String(cString: chosen)) {
            configuration.engine = engine
        }
        self.configuration = configuration
        self.router = router
        watcher = ConnectionWatcher(
            headerTimeout: configuration.requestHeaderTimeoutSeconds > 0 ? .seconds(configuration.requestHeaderTimeoutSeconds) : nil,
            bodyTimeout: configuration.requestBodyTimeoutSeconds > 0 ? .seconds(configuration.requestBodyTimeoutSeconds) : nil,
            // What libmicrohttpd's inactivity timeout did for a stream it served, whose client stopped reading.
            stalledWriteTimeout: configuration.connectionTimeoutSeconds > 0
                ? .seconds(configuration.connectionTimeoutSeconds) : nil)
    }

    /// The port the server listens on (the real one when configured with port 0); 0 before ``start()``.
    public var port: Int { lifecycle.withLock { $0.port } }

    /// Whether ``stop(gracePeriod:)`` has begun: responses then carry `Connection: close`.
    public var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// Requests begun and not yet completed (open event streams included).
    public var activeRequestCount: Int { activeRequests.load(ordering: .relaxed) }

    /// Event streams currently open.
    public var openStreamCount: Int { lifecycle.withLock { $0.streams.count } }

    /// Connections shut down so far for not delivering a request's headers or body within its deadline.
    public var connectionsCutForDeadline: Int {
        watcher.connectionsCut + connectionsCutByEngine.load(ordering: .relaxed)
    }

    /// Starts listening.
    /// - Throws: ``HTTPServerError`` when the host cannot be parsed, the port cannot be bound, or the
    ///   server was already started.
    public func start() throws(HTTPServerError) {
        let alreadyStarted = lifecycle.withLock { state -> Bool in
            if state.phase != .idle { return true }
            state.phase = .running
            return false
        }
        if alreadyStarted { throw HTTPServerError(code: "already_started", message: "The server was already started.") }
        waiting.open()

        // MHD_USE_TURBO also lets event streams be taken over: without it the library would shut down a stream's
        // socket as it closes the connection (see `takeOver`).
        var flags = UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue) | UInt32(MHD_USE_EPOLL.rawValue)
            | UInt32(MHD_ALLOW_SUSPEND_RESUME.rawValue) | UInt32(MHD_USE_TURBO.rawValue)
        let address: BindAddress
        do {
            address = try BindAddress(host: configuration.host, port: configuration.port)
        } catch {
            lifecycle.withLock { $0.phase = .idle }
            throw error
        }
        if address.isIPv6 { flags |= UInt32(MHD_USE_IPv6.rawValue) }
        // The library's connections, and as many event streams on descriptors of their own.
        Self.raiseDescriptorLimit(toHold: 2 * min(max(0, configuration.maxConnections), Int.max / 4))
        // Without the watcher the server still works, only without request deadlines and with departed
        // stream clients noticed at the next heartbeat.
        // A zero or negative interval would make the heartbeat loop spin: at least 10 ms.
        let interval = max(configuration.heartbeatInterval, .milliseconds(10))
        let watching = watcher.start(heartbeatInterval: interval) { [weak self] in self?.sendHeartbeats() }

        if configuration.engine == .epoll {
            let engine = EpollEngine(server: self, configuration: configuration)
            let boundPort: Int
            do {
                boundPort = try engine.start(address: address)
            } catch {
                watcher.stop()
                lifecycle.withLock { $0.phase = .idle }
                throw error
            }
            let heartbeat = watching ? nil : heartbeatTask(interval: interval)
            lifecycle.withLock { state in
                state.engine = engine
                state.port = boundPort
                state.heartbeat = heartbeat
            }
            return
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let daemon: OpaquePointer? = address.withSocketAddress { socketAddress in
            var settings = mvvmr_mhd_settings()
            settings.flags = flags
            settings.port = UInt16(clamping: configuration.port)
            settings.bind_address = socketAddress
            // A pool of one is no pool: the library then uses its single internal thread.
            settings.thread_pool_size = configuration.threadCount > 1 ? UInt32(clamping: configuration.threadCount) : 0
            settings.connection_limit = UInt32(clamping: max(1, configuration.maxConnections))
            settings.per_ip_connection_limit = UInt32(clamping: max(0, configuration.maxConnectionsPerIP))
            settings.connection_timeout_seconds = UInt32(clamping: max(0, configuration.connectionTimeoutSeconds))
            settings.connection_memory_limit = Self.connectionPoolBytes(maxHeaderBytes: configuration.maxHeaderBytes)
            settings.listen_backlog = UInt32(clamping: max(1, configuration.listenBacklog))
            if watching && watcher.hasDeadlines {
                settings.notify_connection = { context, connection, socketContext, code in
                    guard let context, let connection, let socketContext else { return }
                    Unmanaged<HTTPServer>.fromOpaque(context)._withUnsafeGuaranteedRef { server in
                        if code == .CONNECTION_NOTIFY_STARTED {
                            server.watcher.connectionStarted(connection, socketContext: socketContext)
                        } else {
                            server.watcher.connectionClosed(socketContext: socketContext)
                        }
                    }
                }
                settings.notify_connection_context = context
            }
            return mvvmr_mhd_start_daemon(
                &settings,
                { context, connection, url, method, version, uploadData, uploadDataSize, requestSlot in
                    guard let context, let connection, let url, let method, let uploadDataSize, let requestSlot else {
                        return .NO
                    }
                    // The daemon was given the server unretained, which its owner keeps until it stops it: borrowed
                    // here, not retained and released, or both library threads would write its reference count
                    // (kept in a side table, for the weak references to it) at every call.
                    return Unmanaged<HTTPServer>.fromOpaque(context)._withUnsafeGuaranteedRef { server in
                        server.handleAccess(
                            connection: connection, url: url, method: method, version: version,
                            uploadData: uploadData, uploadDataSize: uploadDataSize, requestSlot: requestSlot)
                    }
                },
                context,
                { context, connection, requestSlot, termination in
                    guard let context, let requestSlot, let slot = requestSlot.pointee else { return }
                    requestSlot.pointee = nil
                    Unmanaged<HTTPServer>.fromOpaque(context)._withUnsafeGuaranteedRef { server in
                        // Only a completed response leaves the connection open for a next request (and its header
                        // deadline). Any other end closes it: a taken-over stream's among them, whose socket lives
                        // on through the stream's duplicate, and must not be cut for a deadline the library's last
                        // moments would start.
                        if let connection, termination == .REQUEST_TERMINATED_COMPLETED_OK {
                            server.watcher.responseCompleted(on: connection)
                        }
                        server.requestCompleted(Unmanaged<RequestContext>.fromOpaque(slot).takeRetainedValue())
                    }
                },
                context
            )
        }
        guard let daemon else {
            watcher.stop()
            lifecycle.withLock { $0.phase = .idle }
            throw HTTPServerError(
                code: "start_failed",
                message: "Could not listen on \(configuration.host):\(configuration.port) (in use, or not allowed).")
        }
        let boundPort = Int(mvvmr_mhd_bound_port(daemon))
        // Heartbeats come from the watcher's thread; only without it from a task.
        let heartbeat = watching ? nil : heartbeatTask(interval: interval)
        lifecycle.withLock { state in
            state.daemon = DaemonHandle(pointer: daemon)
            state.port = boundPort
            state.heartbeat = heartbeat
        }
    }

    /// Stops the server gracefully: stops accepting connections, ends every event stream, lets requests in
    /// flight finish until `gracePeriod` has passed, answers any still waiting asynchronous request with
    /// 503 `draining`, then closes every connection. Blocks until done; calling it again does nothing.
    /// - Parameter gracePeriod: how long requests in flight may take to finish.
    public func stop(gracePeriod: Duration = .seconds(10)) {
        let stopping: (daemon: DaemonHandle?, engine: EpollEngine?, streams: [EventStream], heartbeat: Task<Void, Never>?)? =
            lifecycle.withLock { state in
                guard state.phase == .running, state.daemon != nil || state.engine != nil else { return nil }
                state.phase = .draining
                let heartbeat = state.heartbeat
                state.heartbeat = nil
                return (state.daemon, state.engine, Array(state.streams.values), heartbeat)
            }
        guard let stopping else { return }
        draining.store(true, ordering: .relaxed)
        stopping.heartbeat?.cancel()
        // New connections are refused from here on. Not with MHD_quiesce_daemon, which races the library's
        // own worker threads and can abort the process; see `mvvmr_mhd_stop_listening`. The descriptor stays
        // the library's (never freed for reuse while its workers name it) until MHD_stop_daemon closes it.
        if let daemon = stopping.daemon { _ = mvvmr_mhd_stop_listening(daemon.pointer) }
        stopping.engine?.stopListening()
        for stream in stopping.streams { stream.end(.serverStopping) }

        let clock = ContinuousClock()
        let deadline = clock.now + gracePeriod
        while activeRequests.load(ordering: .relaxed) > 0 && clock.now < deadline {
            usleep(2_000)
        }
        lifecycle.withLock { $0.phase = .forcing }
        let stillWaiting = waiting.closeAndList()
        for context in stillWaiting { Self.complete(context, with: HTTPError.draining.response) }
        // Every suspended connection must be resumed before the library stops: wait (briefly) for the
        // resumed ones to be answered and for streams to end.
        let forcedDeadline = clock.now + .seconds(2)
        while clock.now < forcedDeadline {
            let settled = waiting.isEmpty && lifecycle.withLock { $0.streams.isEmpty }
            if settled { break }
            usleep(2_000)
        }
        // A taken-over stream still open writes to a client that stopped reading: drop what it did not take.
        // (The library ends those it serves when it stops.)
        let remaining = lifecycle.withLock { state in
            state.phase = .stopped
            state.daemon = nil
            state.engine = nil
            return Array(state.streams.values)
        }
        for stream in remaining { stream.abandonIfTakenOver() }
        if let daemon = stopping.daemon { MHD_stop_daemon(daemon.pointer) }
        stopping.engine?.stop()
        watcher.stop()
    }

    /// Heartbeats from a task, for a server whose watcher thread could not start.
    private func heartbeatTask(interval: Duration) -> Task<Void, Never> {
        Task.detached { [weak self] in
            while !Task.isCancelled {
                do { try await Task.sleep(for: interval) } catch { return }
                self?.sendHeartbeats()
            }
        }
    }

    /// A request began (its head was read) on MicroHTTP's own engine.
    func requestBegan() {
        activeRequests.add(1, ordering: .relaxed)
    }

    /// A request of MicroHTTP's own engine ended (its answer sent, or its connection closed).
    func requestEnded() {
        activeRequests.subtract(1, ordering: .relaxed)
    }

    /// `count` requests of MicroHTTP's own engine ended at once (their answers sent together).
    func requestsEnded(_ count: Int) {
        activeRequests.subtract(count, ordering: .relaxed)
    }

    /// Raises the process's soft limit on open descriptors (never past the hard limit) so that it can hold
    /// `connections` descriptors for connections plus some for files and the server's own use: a default soft
    /// limit of 1024 would otherwise make accepting fail far below ``HTTPServerConfiguration/maxConnections``.
    /// (Should it still run out, a stream that cannot get a descriptor of its own is left to the library.)
    private static func raiseDescriptorLimit(toHold connections: Int) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let wanted = rlim_t(clamping: max(0, connections) + 256)
        guard limit.rlim_cur < wanted else { return }
        limit.rlim_cur = min(limit.rlim_max, wanted)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }

    // MARK: - Library callbacks

    private func handleAccess(
        connection: OpaquePointer,
        url: UnsafePointer<CChar>,
        method: UnsafePointer<CChar>,
        version: UnsafePointer<CChar>?,
        uploadData: UnsafePointer<CChar>?,
        uploadDataSize: UnsafeMutablePointer<Int>,
        requestSlot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let slot = requestSlot.pointee else {
            // First call: only the headers are known.
            if watcher.hasDeadlines { watcher.headersReceived(on: connection) }
            let context = RequestContext(connection: ConnectionHandle(pointer: connection))
            requestSlot.pointee = Unmanaged.passRetained(context).toOpaque()
            activeRequests.add(1, ordering: .relaxed)
            if let refusal = refusalOfHead(of: context, connection: connection, url: url, version: version) {
                // Answer before reading any of the body, so no byte of it is ever read as a request; the
                // library closes the connection after this.
                context.rejection = refusal
                return queue(refusal.response, on: connection, for: context)
            }
            // Even a request without a body is answered on the next call: a response queued on this first
            // call makes libmicrohttpd close the connection afterwards (no keep-alive).
            return .YES
        }
        let context = Unmanaged<RequestContext>.fromOpaque(slot).takeUnretainedValue()

        let chunkSize = uploadDataSize.pointee
        if chunkSize > 0 {
            uploadDataSize.pointee = 0
            if context.responded { return .YES }
            if context.rejection == nil {
                if context.body.count + chunkSize > configuration.maxBodyBytes {
                    context.rejection = HTTPError.payloadTooLarge(limit: configuration.maxBodyBytes)
                    context.body = []
                } else if let uploadData {
                    if context.body.isEmpty { context.body.reserveCapacity(min(configuration.maxBodyBytes, max(chunkSize, 4096))) }
                    context.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: chunkSize))
                    return .YES
                }
            }
            // Over the limit (a chunked body with no Content-Length): try to answer at once; the library
            // then closes the connection. Otherwise drop what arrives, and give up on the connection when
            // the client keeps sending far past the limit.
            context.discardedBytes += chunkSize
            if let rejection = context.rejection, queue(rejection.response, on: connection, for: context) == .YES {
                return .YES
            }
            return context.discardedBytes / 4 > max(configuration.maxBodyBytes, 64 * 1024) ? .NO : .YES  // (divided: no overflow)
        }

        // The body is complete, or the connection was resumed after an asynchronous handler.
        if watcher.hasDeadlines && !context.isAsynchronous { watcher.requestReceived(on: connection) }
        // What the answer kept is released here, on this thread, once the lock is let go.
        if let (response, kept) = context.withPhase({ phase in Self.takeAnswer(&phase, immediate: nil) }) ?? nil {
            _ = kept
            return queue(response, on: connection, for: context, method: method)
        }
        if context.responded || context.isAsynchronous { return .YES }
        if let rejection = context.rejection { return queue(rejection.response, on: connection, for: context) }
        return dispatch(context: context, connection: connection, url: url, method: method)
    }

    private func requestCompleted(_ context: RequestContext) {
        activeRequests.subtract(1, ordering: .relaxed)
        // An answer the connection never took (its client left first) lets go of what it kept, which may hold the
        // context itself (a responder does).
        let untaken = context.withPhase { phase in Self.takeAnswer(&phase, immediate: nil) }
        _ = untaken
        if context.isListedAsWaiting {
            waiting.remove(context)
        }
    }

    // MARK: - Dispatch

    /// The request's method as a `String`: one of the common methods as a literal, without making a new string
    /// (each made from the library's bytes is validated: about 300 instructions), any other one from its bytes.
    static func methodName(_ method: UnsafePointer<CChar>) -> String {
        switch UInt8(bitPattern: method[0]) {
        case UInt8(ascii: "G") where strcmp(method, "GET") == 0: return "GET"
        case UInt8(ascii: "P") where strcmp(method, "POST") == 0: return "POST"
        case UInt8(ascii: "P") where strcmp(method, "PUT") == 0: return "PUT"
        case UInt8(ascii: "P") where strcmp(method, "PATCH") == 0: return "PATCH"
        case UInt8(ascii: "H") where strcmp(method, "HEAD") == 0: return "HEAD"
        case UInt8(ascii: "D") where strcmp(method, "DELETE") == 0: return "DELETE"
        case UInt8(ascii: "O") where strcmp(method, "OPTIONS") == 0: return "OPTIONS"
        default: return String(cString: method)
        }
    }

    private func dispatch(
        context: RequestContext,
        connection: OpaquePointer,
        url: UnsafePointer<CChar>,
        method: UnsafePointer<CChar>
    ) -> MHD_Result {
        let rawPath = UnsafeBufferPointer(start: UnsafeRawPointer(url).assumingMemoryBound(to: UInt8.self), count: strlen(url))
        let methodName = Self.methodName(method)
        let route = routed(rawPath, method: methodName)
        guard let route else { return queue(HTTPError.invalidPath.response, on: connection, for: context) }
        switch route.resolution {
        case .notFound:
            return queue(HTTPError.notFound.response, on: connection, for: context)
        case .methodNotAllowed(let allowed):
            return queue(HTTPError.methodNotAllowed(allowed: allowed).response, on: connection, for: context)
        case .matched(let handler, let parameters):
            let values = context.packedValues.map(RequestValues.init(packed:)) ?? RequestValues(of: connection)
            let request = HTTPRequest(
                method: methodName,
                rawPath: route.rawPath,
                pathSegments: route.segments,
                pathParameters: parameters,
                query: values.query,
                headers: values.headers,
                cookies: values.cookies,
                body: context.body,
                remoteIP: Self.remoteIP(of: connection)
            )
            context.body = []
            switch handler {
            case .synchronous(let handle):
                return queue(Self.answerNow(handle, request), on: connection, for: context, method: method)
            case .asynchronous(let handle):
                return runAsynchronously(handle, request: request, context: context, connection: connection)
            case .deferred(let handle):
                return runDeferred(handle, request: request, context: context, connection: connection, method: method)
            }
        }
    }

    /// How `rawPath` is routed for `method`: from this thread's ``RouteCache`` when it routed the same lately, else
    /// decoded and resolved now (and kept). Nil when the path cannot be decoded (never kept: it is answered 400).
    func routed(_ rawPath: UnsafeBufferPointer<UInt8>, method: String) -> RouteCache.Entry? {
        // A path too long to keep, or a thread without a cache, is routed as it comes.
        let cache = rawPath.count <= RouteCache.longestPath ? RouteCache.forCurrentThread : nil
        let hash = cache == nil ? 0 : RouteCache.hash(rawPath)
        if let kept = cache?.entry(owner: routeCacheOwner, bytes: rawPath, hash: hash, method: method) { return kept }
        guard let segments = try? PercentDecoding.pathSegments(of: rawPath) else { return nil }
        let entry = RouteCache.Entry(
            owner: routeCacheOwner, bytes: cache == nil ? [] : Array(rawPath), hash: hash, method: method,
            rawPath: String(decoding: rawPath, as: UTF8.self), segments: segments,
            resolution: router.resolve(method: method, segments: segments))
        cache?.keep(entry)
        return entry
    }

    private func runAsynchronously(
        _ handle: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse,
        request: HTTPRequest,
        context: RequestContext,
        connection: OpaquePointer
    ) -> MHD_Result {
        // Ready to be answered (its `phase` set) before `stop` can find it in `waiting`: the lock publishes it.
        context.beginWaiting()
        let accepted = waiting.admit(context)
        guard accepted else { return queue(HTTPError.draining.response, on: connection, for: context) }
        context.isListedAsWaiting = true
        // Suspended before the task exists, so the task's resume always finds it suspended. (Should `stop` answer
        // first, its resume lands before this suspend, which the library then cancels.)
        MHD_suspend_connection(connection)
        Self.answerInTask(handle, request, context)
        return .YES
    }

    private func runDeferred(
        _ handle: @escaping @Sendable (HTTPRequest, DeferredResponder) throws -> HTTPResponse?,
        request: HTTPRequest,
        context: RequestContext,
        connection: OpaquePointer,
        method: UnsafePointer<CChar>
    ) -> MHD_Result {
        // A stopping server that listed its waiting requests already takes no more: refused before the handler runs
        // (and changes anything), as when every deferred request was listed first.
        guard waiting.isAdmitting else { return queue(HTTPError.draining.response, on: connection, for: context) }
        context.beginWaiting(.handling)
        let responder = DeferredResponder(context: context)
        let immediate: HTTPResponse?
        do {
            immediate = try handle(request, responder)
        } catch {
            immediate = Self.response(for: error)
        }
        // An answer given already (returned, or through the responder while the handler ran) goes out now: such a
        // request (a page read, an action on a store that keeps nothing) never waits, so it is never listed for
        // `stop` (two of a shard's locks and a table's insert and removal saved per request). What an answer given
        // meanwhile kept is released here, once the lock is let go.
        if let (now, kept) = context.withPhase({ phase in Self.takeAnswer(&phase, immediate: immediate) }) ?? nil {
            _ = kept
            return queue(now, on: connection, for: context, method: method)
        }
        // The answer comes later: listed before the connection is suspended, so that a stopping server answers it.
        // Refused (the server is stopping), it is answered 503 now, unless the responder answered meanwhile.
        guard waiting.admit(context) else {
            let refused = HTTPError.draining.response
            let (now, kept) = (context.withPhase { phase in Self.takeAnswer(&phase, immediate: refused) } ?? nil) ?? (refused, nil)
            _ = kept
            return queue(now, on: connection, for: context, method: method)
        }
        context.isListedAsWaiting = true
        // Suspended inside the lock the responder's answer takes, until it comes (or, should it have come since the
        // check above, or `stop` have answered, sent now).
        let (now, kept): (HTTPResponse?, (any AnyObject & Sendable)?) = context.withPhase { phase in
            if let answer = Self.takeAnswer(&phase, immediate: nil) { return answer }
            if case .handling = phase {
                phase = .waiting
                MHD_suspend_connection(connection)
            }
            return (nil, nil)
        } ?? (nil, nil)
        _ = kept
        if let now { return queue(now, on: connection, for: context, method: method) }
        return .YES
    }

    /// The answer a deferred request sends now, taken from its phase (which becomes `.answered`): one given already
    /// (`.ready`), else `immediate` while the handler's thread still holds the request (`.handling`); nil otherwise.
    static func takeAnswer(
        _ phase: inout RequestContext.Phase, immediate: HTTPResponse?
    ) -> (HTTPResponse, (any AnyObject & Sendable)?)? {
        switch phase {
        case .ready(let response, let kept):
            phase = .answered
            return (response, kept)
        case .handling:
            guard let immediate else { return nil }
            phase = .answered
            return (immediate, nil)
        case .waiting, .answered:
            return nil
        }
    }

    /// Hands an asynchronous or deferred handler's response to the connection, resuming it if it is
    /// suspended; the first answer wins (the handler's, or shutdown's 503).
    /// - Parameters:
    ///   - context: the request's.
    ///   - response: the answer.
    ///   - kept: released on the library's thread once it took the answer (here, when the request had its answer).
    static func complete(
        _ context: RequestContext, with response: HTTPResponse, keeping kept: (any AnyObject & Sendable)? = nil
    ) {
        context.withPhase { phase in
            switch phase {
            case .waiting:
                phase = .ready(response, kept: kept)
                if let engine = context.engine {
                    engine.resume(context)
                } else if let connection = context.connection {
                    MHD_resume_connection(connection.pointer)
                }
            case .handling:
                // The deferred handler is still running on the library's thread: it sends this when it returns.
                phase = .ready(response, kept: kept)
            case .ready, .answered:
                break
            }
        }
    }

    /// Runs a synchronous handler: its answer, or its error's (both engines').
    static func answerNow(_ handle: @Sendable (HTTPRequest) throws -> HTTPResponse, _ request: HTTPRequest) -> HTTPResponse {
        do {
            return try handle(request)
        } catch {
            return Self.response(for: error)
        }
    }

    /// Runs an asynchronous handler in a `Task` and hands its answer (or its error's) to the request: both engines'.
    static func answerInTask(
        _ handle: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse, _ request: HTTPRequest, _ context: RequestContext
    ) {
        Task {
            let response: HTTPResponse
            do {
                response = try await handle(request)
            } catch {
                response = Self.response(for: error)
            }
            Self.complete(context, with: response)
        }
    }

    /// The answer to a handler's error: an ``HTTPError`` as itself, anything else as 500 `internal_error`.
    static func response(for error: any Error) -> HTTPResponse {
        if let httpError = error as? HTTPError { return httpError.response }
        return HTTPError.internalError.response
    }

    // MARK: - Responses

    /// Queues `response` on the connection. An event stream, given the request's `method`, is taken over
    /// from the library when it can be (see ``takeOver(_:response:connection:context:method:)``).
    private func queue(
        _ response: HTTPResponse, on connection: OpaquePointer, for context: RequestContext,
        method: UnsafePointer<CChar>? = nil
    ) -> MHD_Result {
        let libraryResponse: OpaquePointer?
        // An answer to a `GET` or `HEAD` may be one this thread sent lately (see ``ResponseCache``); not while
        // draining, when every answer says `Connection: close`.
        var cache: ResponseCache?
        switch response.body {
        case .bytes(let bytes):
            if let method, Self.isGetOrHead(method), !isDraining, ResponseCache.admits(bytes) {
                cache = ResponseCache.forCurrentThread
                if let kept = cache?.response(headers: response.headers, body: bytes) {
                    let result = MHD_queue_response(connection, UInt32(clamping: response.status), kept)
                    if result == .YES { context.responded = true }
                    return result
                }
            }
            libraryResponse = bytes.withUnsafeBytes { buffer in
                MHD_create_response_from_buffer(
                    buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY)
            }
        case .stream(let stream):
            if let method,
                let result = takeOver(stream, response: response, connection: connection, context: context, method: method)
            {
                return result
            }
            let retained = Unmanaged.passRetained(stream)
            libraryResponse = MHD_create_response_from_callback(
                UInt64.max,  // MHD_SIZE_UNKNOWN: chunked, open-ended
                // The library reserves (and zeroes) this much per response, but a chunked response, as every
                // HTTP/1.1 stream is, is written through the connection's own buffer and never uses it: small,
                // as it is paid by every idle stream. Only an HTTP/1.0 stream reads through it, 256 bytes a call.
                256,
                { streamPointer, _, buffer, capacity in
                    guard let streamPointer, let buffer else { return -1 }
                    let stream = Unmanaged<EventStream>.fromOpaque(streamPointer).takeUnretainedValue()
                    return stream.read(into: buffer, capacity: capacity)
                },
                retained.toOpaque(),
                { streamPointer in
                    guard let streamPointer else { return }
                    Unmanaged<EventStream>.fromOpaque(streamPointer).takeRetainedValue().finish()
                }
            )
            if libraryResponse == nil {
                retained.release()
                stream.finish()
            } else {
                register(stream, on: connection)
            }
        }
        guard let libraryResponse else { return .NO }
        for field in response.headers {
            // withCString hands over a native string's own bytes; passing the strings as arguments would
            // copy each into a new array first.
            _ = field.name.withCString { name in
                field.value.withCString { value in MHD_add_response_header(libraryResponse, name, value) }
            }
        }
        if isDraining && response.headers["Connection"] == nil {
            _ = MHD_add_response_header(libraryResponse, "Connection", "close")
        }
        let result = MHD_queue_response(connection, UInt32(clamping: response.status), libraryResponse)
        if let cache, case .bytes(let bytes) = response.body {
            // The cache takes this function's reference to the response (the connection holds its own).
            cache.keep(libraryResponse, headers: response.headers, body: bytes)
        } else {
            MHD_destroy_response(libraryResponse)
        }
        if result == .YES { context.responded = true }
        return result
    }

    /// Whether `method` is `GET` or `HEAD`: the requests whose answers may be kept and sent again (``ResponseCache``).
    private static func isGetOrHead(_ method: UnsafePointer<CChar>) -> Bool {
        strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0
    }

    private func register(_ stream: EventStream, on connection: OpaquePointer) {
        let key = ObjectIdentifier(stream)
        let accepted = lifecycle.withLock { state -> Bool in
            guard state.phase == .running else { return false }
            state.streams[key] = stream
            return true
        }
        stream.attach(
            to: ConnectionHandle(pointer: connection), descriptor: mvvmr_mhd_connection_fd(connection), watcher: watcher
        ) { [weak self] in
            self?.lifecycle.withLock { _ = $0.streams.removeValue(forKey: key) }
        }
        if !accepted { stream.end(.serverStopping) }
    }

    /// Serves an event stream from MicroHTTP's own code instead of the library's: the stream gets a duplicate of
    /// the connection's socket (the head and its events are written to it), and the access handler's `.NO`
    /// makes the library close the connection and free it, its memory pool above all. With `MHD_USE_TURBO`,
    /// libmicrohttpd 0.9.75 closes such a connection without `shutdown()` (`MHD_connection_mark_closed_`), so
    /// closing its descriptor leaves the socket open through the duplicate; it removes the descriptor from its
    /// epoll set before closing it (`MHD_cleanup_connections`), so it is never told of the stream's socket again.
    ///
    /// The library calls the request complete as it closes its side; the stream counts as a request of its own
    /// (`activeRequests`) until it is over, and against the connection limits, which the library no longer
    /// applies to it.
    /// A `HEAD` request gets the same head, and the connection closes after it: served by the library, a
    /// stream's `HEAD` response would be followed by a stray chunked terminator (`0\r\n\r\n`, libmicrohttpd
    /// 0.9.75), which a client keeping the connection would read as the start of the next response.
    /// - Returns: `.NO` once the stream is taken over; the response to a stream over a limit (`503`
    ///   `too_many_streams`, `429` `too_many_streams_from_address`); `nil` to let the library serve it (no
    ///   watcher thread; the socket cannot be duplicated; the server stopping).
    private func takeOver(
        _ stream: EventStream, response: HTTPResponse, connection: OpaquePointer, context: RequestContext,
        method: UnsafePointer<CChar>
    ) -> MHD_Result? {
        guard watcher.isRunning else { return nil }
        let descriptor = mvvmr_mhd_connection_fd(connection)
        guard descriptor >= 0 else { return nil }
        let address = Self.remoteIP(of: connection)
        let key = ObjectIdentifier(stream)
        switch admitTakenOverStream(stream, address: address) {
        case .leftToTheLibrary:
            return nil
        case .refused(let error):
            stream.finish()  // .neverStarted: its handlers run, and it takes no more bytes
            return queue(error.response, on: connection, for: context)
        case .admitted:
            break
        }
        activeRequests.add(1, ordering: .relaxed)
        let socket = mvvmr_duplicate_socket(descriptor)
        let taken =
            socket >= 0
            && stream.takeOver(
                socket: socket, head: Self.streamHead(for: response), headOnly: strcmp(method, "HEAD") == 0,
                watcher: watcher
            ) { [weak self] in
                self?.releaseTakenOverStream(key, address: address)
            }
        guard taken else {
            if socket >= 0 { _ = close(socket) }
            releaseTakenOverStream(key, address: address)
            return nil
        }
        context.responded = true
        return .NO
    }

    /// Forgets a taken-over stream that is over (or could not be taken over after all).
    /// Whether `stream`, from `address`, may be served by MicroHTTP itself, under the stream limits; registers it
    /// when it may.
    func admitTakenOverStream(_ stream: EventStream, address: IPAddress) -> StreamAdmission {
        guard watcher.isRunning else { return .leftToTheLibrary }
        let key = ObjectIdentifier(stream)
        let limit = max(1, configuration.maxConnections)
        let limitPerAddress = configuration.maxConnectionsPerIP
        return lifecycle.withLock { state -> StreamAdmission in
            guard state.phase == .running else { return .leftToTheLibrary }
            guard state.takenOverStreams < limit else { return .refused(.streamCapacityReached(limit: limit)) }
            let fromAddress = state.takenOverStreamsByAddress[address, default: 0]
            if limitPerAddress > 0 && fromAddress >= limitPerAddress {
                return .refused(.tooManyStreamsFromAddress(limit: limitPerAddress))
            }
            state.takenOverStreams += 1
            state.takenOverStreamsByAddress[address] = fromAddress + 1
            state.streams[key] = stream
            return .admitted
        }
    }

    func releaseTakenOverStream(_ key: ObjectIdentifier, address: IPAddress) {
        lifecycle.withLock { state in
            state.streams.removeValue(forKey: key)
            state.takenOverStreams -= 1
            let fromAddress = state.takenOverStreamsByAddress[address, default: 1] - 1
            state.takenOverStreamsByAddress[address] = fromAddress > 0 ? fromAddress : nil
        }
        activeRequests.subtract(1, ordering: .relaxed)
    }

    private func sendHeartbeats() {
        // Once stopping, every stream is being ended: no more pings.
        if isDraining { return }
        let streams = lifecycle.withLock { Array($0.streams.values) }
        for stream in streams { stream.sendComment("ping") }
    }

    // MARK: - Reading the request

    private static func remoteIP(of connection: OpaquePointer) -> IPAddress {
        var raw = (UInt64(0), UInt64(0))
        let count = withUnsafeMutableBytes(of: &raw) { buffer -> Int32 in
            guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return 0 }
            return mvvmr_mhd_client_address_bytes(connection, base)
        }
        return withUnsafeBytes(of: &raw) { IPAddress(bytes: $0.prefix(Int(count))) }
    }
}
