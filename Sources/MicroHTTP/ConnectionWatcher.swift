internal import CMicroHTTPD
import Locking
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Watches a server's connections from one thread of its own, for the two things libmicrohttpd 0.9.75 does
/// not do itself:
///
/// - **Request deadlines.** The library's connection timeout counts inactivity only, so a client trickling a
///   byte every few seconds would hold a connection forever. Every connection waiting for a request's header
///   section gets a deadline (`requestHeaderTimeout` from the moment it is ready for one: accepted, or its
///   previous response complete), then one for the body once the headers are in; once the request is whole
///   there is none (the handler, a suspended asynchronous handler or an event stream owns the connection).
///   Each tick, connections past their deadline are shut down (`shutdown`, never `close`: the descriptor stays
///   the library's, which then sees the end of the stream and closes the connection itself).
/// - **Clients leaving an event stream.** A suspended connection is not polled by the library, so it does not
///   see its client go. While an event stream's connection is suspended, its socket sits in this watcher's
///   epoll set for `EPOLLRDHUP | EPOLLHUP | EPOLLERR`; a hang-up ends the stream with `.clientDisconnected`.
/// - **Event streams taken over from the library.** A stream MicroHTTP serves itself (``EventStream``) has its
///   own socket in this epoll set for as long as it is open: for a hang-up, and for `EPOLLOUT` while bytes are
///   pending that the kernel's send buffer could not take; this thread then writes them. A stream whose client
///   takes none of them for `stalledWriteTimeout` is ended each tick, as the library's inactivity timeout ended
///   the streams it served.
///
/// Descriptor numbers are reused as soon as the library closes them, so a descriptor is only touched while the
/// library cannot have closed it: a connection's between the library's STARTED and CLOSED notifications
/// (and under the same lock as their bookkeeping), a stream's while its connection is suspended, and a taken-over
/// stream's own descriptor (not the library's) until the stream closes it, which it does after unwatching it.
/// Events are keyed by a token per watched stream, never by the descriptor.
///
/// The per-request bookkeeping is kept off any shared lock: each connection's record hangs from the library's
/// socket context, and a request only stores its deadline into the record's atomic (milliseconds on the coarse
/// monotonic clock). The shared table, under the lock, changes only when a connection starts or closes.
final class ConnectionWatcher: Sendable {
    /// One connection, from the library's STARTED notification to its CLOSED one.
    private final class TrackedConnection: Sendable {
        let descriptor: Int32
        /// When the connection is cut unless the request part it waits for has arrived, in milliseconds of
        /// ``ConnectionWatcher/nowMilliseconds()``; 0: no deadline.
        let deadline: Atomic<UInt64>

        init(descriptor: Int32, deadline: UInt64) {
            self.descriptor = descriptor
            self.deadline = Atomic(deadline)
        }
    }

    private struct State {
        var connections: [ObjectIdentifier: TrackedConnection] = [:]
        var streams: [UInt64: EventStream] = [:]
        /// The tokens of taken-over streams waiting for their socket to become writable.
        var writing: Set<UInt64> = []
        var nextToken: UInt64 = 1
        var running = false
        var thread: pthread_t?
        var connectionsCut = 0
        /// Sends every stream its heartbeat; called on this thread every `heartbeatMilliseconds`.
        var heartbeat: (@Sendable () -> Void)?
        var heartbeatMilliseconds: UInt64 = 0
    }

    /// The epoll token of the wake-up eventfd; stream tokens start at 1.
    private static let wakeToken: UInt64 = 0

    private let state = Locked(State())
    private let epollDescriptor: Int32
    private let wakeDescriptor: Int32
    /// The deadlines in milliseconds; 0: none.
    private let headerTimeoutMilliseconds: UInt64
    private let bodyTimeoutMilliseconds: UInt64
    /// How long a taken-over stream may have bytes pending with none taken by its client; 0: no limit.
    private let stalledWriteTimeoutMilliseconds: UInt64
    private let tickMilliseconds: Int32

    /// Creates a watcher; nothing runs until ``start()``.
    /// - Parameters:
    ///   - headerTimeout: how long a connection may take to deliver a request's header section; `nil`: no limit.
    ///   - bodyTimeout: how long it may take to deliver the body after the headers; `nil`: no limit.
    ///   - stalledWriteTimeout: how long a taken-over event stream may have bytes pending without its client
    ///     taking any; `nil`: no limit.
    ///   - tick: how often deadlines are checked (the precision of the cut).
    init(
        headerTimeout: Duration?, bodyTimeout: Duration?, stalledWriteTimeout: Duration? = nil,
        tick: Duration = .milliseconds(250)
    ) {
        headerTimeoutMilliseconds = headerTimeout.map { max(1, Self.milliseconds($0)) } ?? 0
        bodyTimeoutMilliseconds = bodyTimeout.map { max(1, Self.milliseconds($0)) } ?? 0
        stalledWriteTimeoutMilliseconds = stalledWriteTimeout.map { max(1, Self.milliseconds($0)) } ?? 0
        tickMilliseconds = Int32(clamping: max(10, Self.milliseconds(tick)))
        epollDescriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeDescriptor = eventfd(0, Int32(EFD_CLOEXEC))
    }

    deinit {
        if epollDescriptor >= 0 { close(epollDescriptor) }
        if wakeDescriptor >= 0 { close(wakeDescriptor) }
    }

    /// Whether connections get request deadlines at all (the library must then report each connection).
    var hasDeadlines: Bool { headerTimeoutMilliseconds > 0 || bodyTimeoutMilliseconds > 0 }

    /// Whether the watching thread runs (event streams can be taken over from the library only then).
    var isRunning: Bool { state.withLock { $0.running } }

    /// Connections cut so far for missing a deadline.
    var connectionsCut: Int { state.withLock { $0.connectionsCut } }

    /// Starts the watching thread.
    /// - Parameters:
    ///   - heartbeatInterval: how often to call `heartbeat`.
    ///   - heartbeat: sends every open stream its heartbeat. Called on this thread, a thread of its own, so that
    ///     heartbeats keep their interval even while Swift's cooperative threads are all busy (user code, or a
    ///     test suite, that blocks them would otherwise delay every stream's ping past its client's patience).
    /// - Returns: `false` when the thread (or its epoll set) could not be created; the server then runs
    ///   without deadlines and notices departed stream clients at the next heartbeat only (sent from a `Task`).
    func start(heartbeatInterval: Duration, heartbeat: @escaping @Sendable () -> Void) -> Bool {
        guard epollDescriptor >= 0, wakeDescriptor >= 0 else { return false }
        var wake = epoll_event()
        wake.events = EPOLLIN.rawValue
        wake.data.u64 = Self.wakeToken
        // EEXIST: started before, by a server whose start failed afterwards and is being started again.
        guard epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, wakeDescriptor, &wake) == 0 || errno == EEXIST else { return false }
        // Set before the thread starts, so that its first look sees the interval (and does not ping at once).
        state.withLock { state in
            state.heartbeat = heartbeat
            state.heartbeatMilliseconds = max(10, Self.milliseconds(heartbeatInterval))
        }
        guard case .success(let thread) = Threads.start({ self.run() }) else { return false }
        state.withLock { state in
            state.running = true
            state.thread = thread
        }
        return true
    }

    /// Stops the thread and waits for it. Streams still watched are forgotten (the server ends them first).
    func stop() {
        let thread: pthread_t? = state.withLock { state in
            state.running = false
            state.streams = [:]
            state.heartbeat = nil
            let thread = state.thread
            state.thread = nil
            return thread
        }
        guard let thread else { return }
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, MemoryLayout<UInt64>.size)
        pthread_join(thread, nil)
    }

    // MARK: - Request deadlines (called from the library's threads)

    /// The library accepted `connection`: its first request's header deadline starts now. Hangs the connection's
    /// record from `socketContext`, the library's slot for it.
    func connectionStarted(_ connection: OpaquePointer, socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        let descriptor = mvvmr_mhd_connection_fd(connection)
        guard descriptor >= 0 else { return }
        let tracked = TrackedConnection(descriptor: descriptor, deadline: deadline(after: headerTimeoutMilliseconds))
        socketContext.pointee = Unmanaged.passRetained(tracked).toOpaque()
        state.withLock { $0.connections[ObjectIdentifier(tracked)] = tracked }
    }

    /// The library is about to close the connection: its descriptor must not be touched from here on.
    func connectionClosed(socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        guard let pointer = socketContext.pointee else { return }
        socketContext.pointee = nil
        let tracked = Unmanaged<TrackedConnection>.fromOpaque(pointer).takeRetainedValue()
        _ = state.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(tracked)) }
    }

    /// A request's header section arrived: the body's deadline starts now.
    func headersReceived(on connection: OpaquePointer) {
        tracked(connection)?.deadline.store(deadline(after: bodyTimeoutMilliseconds), ordering: .relaxed)
    }

    /// A request arrived whole: no deadline until its response is complete.
    func requestReceived(on connection: OpaquePointer) {
        tracked(connection)?.deadline.store(0, ordering: .relaxed)
    }

    /// A response is complete: should the connection stay open, the next request's header deadline starts now.
    func responseCompleted(on connection: OpaquePointer) {
        tracked(connection)?.deadline.store(deadline(after: headerTimeoutMilliseconds), ordering: .relaxed)
    }

    /// The record of a connection the library reported started (and not yet closed: it is calling back for it).
    private func tracked(_ connection: OpaquePointer) -> TrackedConnection? {
        guard let pointer = mvvmr_mhd_socket_context(connection) else { return nil }
        return Unmanaged<TrackedConnection>.fromOpaque(pointer).takeUnretainedValue()
    }

    private func deadline(after milliseconds: UInt64) -> UInt64 {
        milliseconds == 0 ? 0 : Self.nowMilliseconds() + milliseconds
    }

    /// Milliseconds on the coarse monotonic clock: a few instructions to read (no system call), and its
    /// resolution (a few milliseconds) is far below the deadlines' 250 ms tick.
    static func nowMilliseconds() -> UInt64 {
        var now = timespec()
        _ = clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return UInt64(max(0, now.tv_sec)) * 1000 + UInt64(max(0, now.tv_nsec)) / 1_000_000
    }

    private static func milliseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        // Saturating: a public configuration may hold any Duration, and an overflow here would trap.
        let (whole, overflowed) = max(0, seconds).multipliedReportingOverflow(by: 1000)
        if overflowed { return UInt64.max }
        let (total, overflowedAdding) = whole.addingReportingOverflow(max(0, attoseconds) / 1_000_000_000_000_000)
        return overflowedAdding ? UInt64.max : UInt64(clamping: total)
    }

    // MARK: - Event streams (called under the stream's lock)

    /// Watches a suspended stream's socket for its client hanging up.
    /// - Returns: the token to hand back to ``unwatch(token:descriptor:)`` before the connection is resumed;
    ///   `nil` when the stream is not watched (the watcher is stopped, or epoll refused).
    func watch(_ stream: EventStream, descriptor: Int32) -> UInt64? {
        state.withLock { state -> UInt64? in
            guard state.running else { return nil }
            let token = state.nextToken
            var event = epoll_event()
            event.events = EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue
            event.data.u64 = token
            guard epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, descriptor, &event) == 0 else { return nil }
            state.nextToken += 1
            state.streams[token] = stream
            return token
        }
    }

    /// Adds or removes `EPOLLOUT` for a watched stream's socket (one the stream owns: called under its lock).
    func setWritableInterest(_ writable: Bool, token: UInt64, descriptor: Int32) {
        state.withLock { state in
            guard state.running, state.streams[token] != nil else { return }
            if writable { state.writing.insert(token) } else { state.writing.remove(token) }
            var event = epoll_event()
            event.events =
                EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue | (writable ? EPOLLOUT.rawValue : 0)
            event.data.u64 = token
            _ = epoll_ctl(epollDescriptor, EPOLL_CTL_MOD, descriptor, &event)
        }
    }

    /// Stops watching a stream's socket; called before its connection is resumed (or, for a taken-over stream,
    /// before its socket is closed), so the descriptor is still the stream's own.
    func unwatch(token: UInt64, descriptor: Int32) {
        state.withLock { state in
            guard state.streams.removeValue(forKey: token) != nil else { return }
            state.writing.remove(token)
            if state.running {
                var unused = epoll_event()
                _ = epoll_ctl(epollDescriptor, EPOLL_CTL_DEL, descriptor, &unused)
            }
        }
    }

    // MARK: - The thread

    private func run() {
        let capacity = 64
        var events = [epoll_event](repeating: epoll_event(), count: capacity)
        var nextHeartbeat: UInt64 = 0
        while true {
            let (heartbeat, heartbeatMilliseconds) = state.withLock { ($0.heartbeat, $0.heartbeatMilliseconds) }
            let now = Self.nowMilliseconds()
            if nextHeartbeat == 0 && heartbeatMilliseconds > 0 { nextHeartbeat = now &+ heartbeatMilliseconds }
            if let heartbeat, nextHeartbeat != 0, now >= nextHeartbeat {
                heartbeat()
                nextHeartbeat = now &+ heartbeatMilliseconds
            }
            let untilHeartbeat = heartbeat == nil ? tickMilliseconds : Int32(clamping: nextHeartbeat &- min(now, nextHeartbeat))
            let timeout = max(1, min(tickMilliseconds, untilHeartbeat))
            let count = events.withUnsafeMutableBufferPointer { buffer in
                epoll_wait(epollDescriptor, buffer.baseAddress, Int32(capacity), timeout)
            }
            var stopping = false
            var ready: [(stream: EventStream, events: UInt32)] = []
            if count > 0 {
                let received = events.prefix(Int(count)).map { (token: $0.data.u64, events: $0.events) }
                stopping = received.contains { $0.token == Self.wakeToken }
                if stopping {
                    // Taken back, so that a watcher started again (a server whose start failed, started anew) does
                    // not find a stale wake-up and stop at once.
                    var drained: UInt64 = 0
                    _ = read(wakeDescriptor, &drained, MemoryLayout<UInt64>.size)
                }
                ready = state.withLock { state in
                    received.compactMap { entry in state.streams[entry.token].map { ($0, entry.events) } }
                }
            }
            // Outside the watcher's lock: the stream takes its own lock, and ending it unwatches it.
            let hangUp = EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue
            for (stream, events) in ready {
                stream.socketReady(hangUp: events & hangUp != 0, writable: events & EPOLLOUT.rawValue != 0)
            }
            if stopping || !state.withLock({ $0.running }) { return }
            if hasDeadlines { cutOverdueConnections() }
            if stalledWriteTimeoutMilliseconds > 0 { endStalledStreams() }
        }
    }

    /// Ends the taken-over streams whose clients took none of their pending bytes for the stalled-write timeout.
    private func endStalledStreams() {
        let writers = state.withLock { state in state.writing.compactMap { state.streams[$0] } }
        guard !writers.isEmpty else { return }
        let now = Self.nowMilliseconds()
        // Outside the watcher's lock: ending a stream unwatches it.
        for stream in writers { stream.endIfStalled(now: now, timeoutMilliseconds: stalledWriteTimeoutMilliseconds) }
    }

    private func cutOverdueConnections() {
        let now = Self.nowMilliseconds()
        state.withLock { state in
            for connection in state.connections.values {
                let deadline = connection.deadline.load(ordering: .relaxed)
                guard deadline != 0, deadline <= now else { continue }
                // Under the lock that CLOSED takes too, so the descriptor is still this connection's.
                _ = shutdown(connection.descriptor, Int32(SHUT_RDWR))
                connection.deadline.store(0, ordering: .relaxed)
                state.connectionsCut += 1
            }
        }
    }
}
