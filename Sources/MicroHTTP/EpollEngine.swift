internal import CMicroHTTPD
import Locking
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// MicroHTTP's own HTTP/1.1 engine (``HTTPServerConfiguration/Engine/epoll``): one epoll set for the whole engine,
/// shared by its loops, one loop per thread. Every connection is in the one set (edge-triggered, reading and writing),
/// with the listening socket; whichever loop is running takes whichever connection is ready, so that no request waits
/// behind a loop that the scheduler took off its core while another loop could serve it. (With a set per loop, the
/// requests of a loop that was preempted waited for it, a time slice of the scheduler's, and made the action's p99:
/// see BENCHMARKS.md, the sixteenth round.)
///
/// A connection is served by one loop at a time: its ``EpollConnection/ownership`` says whether a loop holds it, and
/// a loop that takes an event for a held connection notes the event in it and goes on; the holder serves what was
/// noted before it lets go. Events name a connection by its descriptor and a generation, looked up in the engine's
/// table, so that an event taken for a connection that another loop closed meanwhile finds nothing.
///
/// A loop reads a connection's bytes into a buffer of its own, reads whole requests out of them (``RequestHead``,
/// ``ChunkedBodyDecoder``), hands each to its route, and writes the answers of everything it read in one `send`.
/// A request answered later (an asynchronous or deferred handler) leaves its connection waiting, unread, until
/// the answer is handed back (``EpollEngine/resume(_:)``): a loop is woken through an eventfd unless one was woken
/// and has not drained the answers since; it sends a few and wakes another loop for the rest. Deadlines (the head's, the body's, inactivity) are checked ten times a second by whichever loop
/// comes first, over every connection no loop holds at that moment. Event streams are taken over as under
/// libmicrohttpd: the stream gets the socket, the watcher watches it.
final class EpollEngine: @unchecked Sendable {
    // @unchecked Sendable: what the loops share is atomic, locked, or a connection held by one loop at a time.

    /// The server the engine serves; it stops the engine (and joins its threads) before it can go away.
    unowned(unsafe) let server: HTTPServer
    let configuration: HTTPServerConfiguration
    private(set) var loops: [EpollLoop] = []
    private var threads: [pthread_t] = []
    /// The listening socket (-1: none), and whether it is in the epoll set: taken out while the engine is at its
    /// connection limit, and for good once it was shut down.
    let listener = Locked<(descriptor: Int32, polled: Bool, shutDown: Bool)>((-1, false, false))
    /// Connections open (held to `maxConnections`).
    let openConnections = Atomic<Int>(0)
    /// Connections open per client address (held to `maxConnectionsPerIP`).
    let connectionsByAddress = Locked<[IPAddress: Int]>([:])
    /// The one epoll set of every loop: the listening socket, the wake-up and the stop eventfds, every connection.
    let epoll: Int32
    /// Written when an answer given on another thread waits in `resumed` and no loop was woken for it yet.
    let wake: Int32
    /// Written once, never read: readable for every loop from the stop on.
    let stopSignal: Int32
    /// Every open connection, by descriptor.
    let connections = Locked<[Int32: EpollConnection]>([:])
    /// The generation the next connection gets: with its descriptor, it names the connection in its events.
    let nextGeneration = Atomic<UInt32>(1)
    /// Answered requests handed back by other threads, for whichever loop drains them first.
    let resumed = Locked<[RequestContext]>([])
    /// A loop was woken for `resumed` and has not drained it since.
    let wakePending = Atomic<Bool>(false)
    let stopping = Atomic<Bool>(false)
    /// When the next sweep of deadlines is due (milliseconds, `CLOCK_MONOTONIC_COARSE`): the loop that moves it on
    /// sweeps.
    let nextSweep = Atomic<UInt64>(0)

    init(server: HTTPServer, configuration: HTTPServerConfiguration) {
        self.server = server
        self.configuration = configuration
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        stopSignal = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
    }

    deinit {
        for descriptor in [epoll, wake, stopSignal] where descriptor >= 0 { close(descriptor) }
    }

    static let listenToken: UInt64 = 0
    static let wakeToken: UInt64 = 1
    static let stopToken: UInt64 = 2

    /// Binds the listening socket and starts the loops.
    /// - Returns: the port bound.
    func start(address: BindAddress) throws(HTTPServerError) -> Int {
        guard epoll >= 0, wake >= 0, stopSignal >= 0 else {
            throw HTTPServerError(code: "start_failed", message: "Could not make the server's epoll set.")
        }
        guard let socket = Self.listeningSocket(address: address, port: configuration.port, backlog: configuration.listenBacklog) else {
            throw HTTPServerError(
                code: "start_failed",
                message: "Could not listen on \(configuration.host):\(configuration.port) (in use, or not allowed).")
        }
        var event = epoll_event()
        // Answers handed back: edge-triggered, one loop woken per write. The stop: level-triggered, every loop sees it.
        event.events = EPOLLIN.rawValue | EPOLLET.rawValue
        event.data.u64 = Self.wakeToken
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &event)
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.stopToken
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, stopSignal, &event)
        listener.withLock { $0 = (socket, false, false) }
        resumeListeningIfRoom()
        loops = (0..<max(1, configuration.threadCount)).map { _ in EpollLoop(engine: self) }
        for loop in loops {
            guard case .success(let thread) = Threads.start({ loop.run() }) else {
                stop()
                throw HTTPServerError(code: "start_failed", message: "Could not start the server's threads.")
            }
            threads.append(thread)
        }
        return Self.boundPort(of: socket)
    }

    /// Refuses new connections from now on: the listening socket is shut down (a client's connect is reset) and
    /// leaves the epoll set; ``stop()`` closes it.
    func stopListening() {
        listener.withLock { state in
            guard state.descriptor >= 0, !state.shutDown else { return }
            state.shutDown = true
            _ = shutdown(state.descriptor, Int32(SHUT_RDWR))
            if state.polled {
                var unused = epoll_event()
                _ = epoll_ctl(epoll, EPOLL_CTL_DEL, state.descriptor, &unused)
                state.polled = false
            }
        }
    }

    /// Closes every connection, ends the loops and waits for their threads.
    func stop() {
        stopping.store(true, ordering: .releasing)
        var one: UInt64 = 1
        _ = Glibc.write(stopSignal, &one, 8)
        for thread in threads { pthread_join(thread, nil) }
        threads = []
        // No loop runs now: the first one closes what is left, and completes the answers handed back meanwhile (on
        // connections closed by then).
        loops.first?.closeEverything()
        listener.withLock { state in
            if state.polled {
                var unused = epoll_event()
                _ = epoll_ctl(epoll, EPOLL_CTL_DEL, state.descriptor, &unused)
            }
            if state.descriptor >= 0 { close(state.descriptor) }
            state = (-1, false, true)
        }
    }

    /// From any thread: `context`'s answer is ready (its phase holds it); a loop sends it.
    func resume(_ context: RequestContext) {
        resumed.withLock { $0.append(context) }
        wakeALoop()
    }

    /// Wakes a loop for `resumed`, unless one was woken and has not drained it since.
    func wakeALoop() {
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) {
            var one: UInt64 = 1
            _ = Glibc.write(wake, &one, 8)
        }
    }

    /// The most connections the engine may hold (`maxConnections`, at least one).
    var connectionLimit: Int { max(1, configuration.maxConnections) }

    /// Counts one more open connection, unless the engine is at ``connectionLimit``.
    func reserveConnectionSlot() -> Bool {
        openConnections.incrementIfBelow(connectionLimit)
    }

    /// Whether another connection from `address` may open; counts it when it may.
    func admitConnection(from address: IPAddress) -> Bool {
        let limit = configuration.maxConnectionsPerIP
        guard limit > 0 else { return true }
        return connectionsByAddress.withLock { counts in
            let open = counts[address, default: 0]
            guard open < limit else { return false }
            counts[address] = open + 1
            return true
        }
    }

    /// A connection from `address` closed (or was handed to an event stream).
    func releaseConnection(from address: IPAddress) {
        guard configuration.maxConnectionsPerIP > 0 else { return }
        connectionsByAddress.withLock { counts in
            let open = counts[address, default: 1] - 1
            counts[address] = open > 0 ? open : nil
        }
    }

    /// Takes the listening socket out of the epoll set (at the connection limit, or out of descriptors): a loop puts
    /// it back at a sweep, or when a connection closes.
    /// - Parameter evenWithRoom: whether to take it out though the engine is below its limit (out of descriptors);
    ///   otherwise it stays in when a connection closed meanwhile.
    func pauseListening(evenWithRoom: Bool = false) {
        listener.withLock { state in
            guard state.polled, evenWithRoom || openConnections.load(ordering: .relaxed) >= connectionLimit else { return }
            var unused = epoll_event()
            _ = epoll_ctl(epoll, EPOLL_CTL_DEL, state.descriptor, &unused)
            state.polled = false
        }
    }

    /// Puts the listening socket back in the epoll set, if it is out and the engine is below its limit.
    func resumeListeningIfRoom() {
        listener.withLock { state in
            guard !state.polled, state.descriptor >= 0, !state.shutDown,
                openConnections.load(ordering: .relaxed) < connectionLimit
            else { return }
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = Self.listenToken
            state.polled = epoll_ctl(epoll, EPOLL_CTL_ADD, state.descriptor, &event) == 0
        }
    }

    private static func listeningSocket(address: BindAddress, port: Int, backlog: Int) -> Int32? {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let socket = Glibc.socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return nil }
        var one: Int32 = 1
        _ = setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if address.isIPv6 { _ = setsockopt(socket, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        let bound = address.withBindableSocketAddress(port: port) { bind(socket, $0, $1) }
        guard bound == 0, listen(socket, Int32(clamping: max(1, backlog))) == 0 else {
            close(socket)
            return nil
        }
        return socket
    }

    private static func boundPort(of socket: Int32) -> Int {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        guard named == 0 else { return 0 }
        return withUnsafeBytes(of: &address) { raw in
            // sin_port and sin6_port sit at the same offset, in network order.
            Int(UInt16(raw[2]) << 8 | UInt16(raw[3]))
        }
    }
}


/// One connection of the engine: touched only by the loop that holds it (``ownership``).
final class EpollConnection: @unchecked Sendable {
    // @unchecked Sendable: every loop may find it in the engine's table, but only the one holding it touches its state.

    /// Whether a loop holds the connection (``held``), and what happened while it did: the events other loops took
    /// for it, and ``answerHandedBack``. Taken with acquiring order and let go with releasing order, so that the next
    /// holder sees everything the last one wrote.
    let ownership = Atomic<UInt32>(0)
    /// A loop holds the connection.
    static let held: UInt32 = 1 << 31
    /// Its awaited answer was handed back (``EpollEngine/resume(_:)``).
    static let answerHandedBack: UInt32 = 1 << 30
    /// With its descriptor, what names the connection in its events (the descriptor alone could be a newer one's).
    let generation: UInt32
    enum Stage {
        /// Waiting for (or reading) a request's head.
        case head
        /// Reading a request's body (`pending` holds its head's parts).
        case body
        /// The request's answer is awaited; nothing more is read meanwhile.
        case waiting
    }

    /// A request whose head was read, while its body arrives.
    struct PendingRequest {
        var method: String
        var isHead: Bool
        var route: RouteCache.Entry?
        var values: PackedValues
        var keepAlive: Bool
        var isHTTP10: Bool
        var bodyRemaining: Int
        var chunked: ChunkedBodyDecoder?
    }

    let descriptor: Int32
    let remoteIP: IPAddress
    var stage = Stage.head
    /// Bytes received and not read yet (only when a request arrived in pieces, or behind a waiting one).
    var received: [UInt8] = []
    /// Bytes of answers the socket has not taken yet, from `unsentStart` on.
    var unsent: [UInt8] = []
    /// Where the bytes not yet sent begin in `unsent`.
    var unsentStart = 0
    /// Answers queued (in the loop's output or `unsent`) and not yet all sent: each still counts as an active request
    /// of the server, so that a graceful stop waits for it.
    var answersUnsent = 0
    /// A refusal was answered: the connection closes after it, reading (and dropping) what the client still sends
    /// for a moment first, so that the close does not reset the connection before the client read the refusal.
    var refused = false
    /// While lingering after a refusal: until when (0: not lingering).
    var lingerUntil: UInt64 = 0
    /// While lingering after a refusal: how many more bytes it reads (and drops).
    var lingerBudget = 0
    var pending: PendingRequest?
    var body: [UInt8] = []
    /// The request awaiting its answer, with what its answer needs to know.
    var waiting: RequestContext?
    var waitingKeepAlive = true
    var waitingIsHead = false
    var waitingIsHTTP10 = false
    /// When the connection became ready for a head (accepted, or its last answer queued), or its body began.
    var stageStartedAt: UInt64
    var lastActivity: UInt64
    /// Close once the answers queued are sent (nothing more is read).
    var closeAfterWrite = false
    /// Readable while it could not be read (edge-triggered: read once it can be).
    var readPending = false
    var closed = false
    /// Counted in the server's active requests (a head read, no answer queued yet).
    var requestActive = false

    /// How many bytes of answers wait for the socket.
    var unsentCount: Int { unsent.count - unsentStart }

    /// The top bit of every connection's token: never set in one of the engine's own.
    static let tokenMark: UInt64 = 1 << 63

    /// The token of the connection's events: its generation (31 bits of it) and its descriptor, with ``tokenMark``.
    var token: UInt64 {
        Self.tokenMark | UInt64(generation & 0x7FFF_FFFF) << 32 | UInt64(UInt32(bitPattern: descriptor))
    }

    /// Takes the connection for the calling loop, or, when another loop holds it, notes `happened` (events, or
    /// ``answerHandedBack``) for that loop to serve before it lets go.
    /// - Returns: whether the caller holds it now.
    func take(noting happened: UInt32) -> Bool {
        var state = ownership.load(ordering: .relaxed)
        while true {
            let desired = state & Self.held == 0 ? Self.held : state | happened
            let (exchanged, original) = ownership.compareExchange(
                expected: state, desired: desired, ordering: .acquiringAndReleasing)
            if exchanged { return state & Self.held == 0 }
            state = original
        }
    }

    /// Takes the connection only if no loop holds it and nothing is noted (the sweep's way: it passes over the others).
    func takeIfFree() -> Bool {
        ownership.compareExchange(expected: 0, desired: Self.held, ordering: .acquiring).exchanged
    }

    /// Lets go of the connection, unless something was noted meanwhile: then it stays held, and what was noted is
    /// returned (and cleared) for the holder to serve.
    func letGo() -> UInt32? {
        var state = ownership.load(ordering: .relaxed)
        while true {
            let desired = state == Self.held ? 0 : Self.held
            let (exchanged, original) = ownership.compareExchange(
                expected: state, desired: desired, ordering: .acquiringAndReleasing)
            if exchanged { return state == Self.held ? nil : state & ~Self.held }
            state = original
        }
    }

    init(descriptor: Int32, generation: UInt32, remoteIP: IPAddress, now: UInt64) {
        self.descriptor = descriptor
        self.generation = generation
        self.remoteIP = remoteIP
        stageStartedAt = now
        lastActivity = now
    }
}

/// One loop and its thread: it polls the engine's epoll set and serves the connections it takes. Everything here is
/// the loop's own; what it shares is the engine's, and a connection only while it holds it.
final class EpollLoop: @unchecked Sendable {
    unowned(unsafe) let engine: EpollEngine
    private unowned(unsafe) let server: HTTPServer
    private let configuration: HTTPServerConfiguration
    private let inputCapacity = 64 * 1024
    private let input: UnsafeMutableRawPointer
    private var output = ByteWriter(capacity: 16 * 1024)
    private var packing = ByteWriter(capacity: 4 * 1024)
    private var now: UInt64 = 0
    private var dateSecond = -1
    private var dateLine: [UInt8] = []
    /// Header blocks rendered lately, keyed by the storage of the field list they came from, which is held so that
    /// its address cannot be another list's (an answer's constant fields are one shared array).
    private var renderedFields: [[HTTPHeader]] = []
    private var renderedBlocks: [(bytes: [UInt8], closes: Bool)] = []
    private var nextRendered = 0
    private let headerLimit: Int
    private let headTimeout: UInt64
    private let bodyTimeout: UInt64
    private let inactivityTimeout: UInt64

    private static let sweepInterval: UInt64 = 100
    /// The most events a loop takes from the set at once: the loops share the ready connections, so a loop takes only
    /// a few, and the others take the rest while it serves them.
    private static let eventsPerPoll = 4
    /// The most answers handed back that a loop sends per wake-up before it wakes another loop for the rest.
    private static let answersPerDrain = 8
    /// The events of a connection's that mean "read it" (readable, closed by the peer, or failed).
    private static let readEvents = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue
    /// The most answer bytes a connection may have queued before the loop stops reading its pipelined requests
    /// (it reads on once they are sent), so that a client cannot make the loop hold the answers of thousands of
    /// requests sent in one go.
    private static let outputLimit = 256 * 1024
    /// How long, and for how many more bytes, a refused connection is read (and dropped) before it closes.
    private static let lingerMilliseconds: UInt64 = 2000
    private static let lingerBytes = 256 * 1024

    init(engine: EpollEngine) {
        self.engine = engine
        server = engine.server
        configuration = engine.configuration
        input = UnsafeMutableRawPointer.allocate(byteCount: inputCapacity, alignment: 16)
        headerLimit = max(4096, configuration.maxHeaderBytes)
        headTimeout = UInt64(max(0, configuration.requestHeaderTimeoutSeconds)) * 1000
        bodyTimeout = UInt64(max(0, configuration.requestBodyTimeoutSeconds)) * 1000
        inactivityTimeout = UInt64(max(0, configuration.connectionTimeoutSeconds)) * 1000
    }

    deinit {
        input.deallocate()
    }

    // MARK: - The loop

    func run() {
        mvvmr_name_current_thread("MicroHTTP-loop")
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Self.eventsPerPoll)
        defer { events.deallocate() }
        now = Self.milliseconds()
        while !engine.stopping.load(ordering: .acquiring) {
            let due = engine.nextSweep.load(ordering: .relaxed)
            let timeout = Int32(clamping: due > now ? due - now : 0)
            let count = epoll_wait(engine.epoll, events, Int32(Self.eventsPerPoll), timeout)
            now = Self.milliseconds()
            if count > 0 {
                // The engine's own events first: answers handed back wait for no connection of this batch (a slow
                // handler there, or this loop preempted, would hold up every loop's answers).
                for index in 0..<Int(count) {
                    switch events[index].data.u64 {
                    case EpollEngine.listenToken: accept()
                    case EpollEngine.wakeToken: drainResumed()
                    default: break
                    }
                }
                for index in 0..<Int(count) where events[index].data.u64 & EpollConnection.tokenMark != 0 {
                    let token = events[index].data.u64
                    let descriptor = Int32(bitPattern: UInt32(truncatingIfNeeded: token))
                    guard let connection = engine.connections.withLock({ $0[descriptor] }), connection.token == token
                    else { continue }
                    // Read again for each: a handler before it may have taken a while, and the connection's stamps
                    // (deadlines, inactivity) are compared with another loop's clock.
                    now = Self.milliseconds()
                    serve(connection, events[index].events)
                }
            }
            let sweepDue = engine.nextSweep.load(ordering: .relaxed)
            if now >= sweepDue,
                engine.nextSweep.compareExchange(expected: sweepDue, desired: now + Self.sweepInterval, ordering: .relaxed)
                    .exchanged
            {
                sweep()
            }
        }
    }

    /// Serves what `happened` on `connection` (events, or an answer handed back), and then whatever other loops
    /// noted for it meanwhile; or, when another loop holds it, notes it for that loop.
    private func serve(_ connection: EpollConnection, _ happened: UInt32) {
        guard connection.take(noting: happened) else { return }
        serveHeld(connection, happened)
    }

    /// Serves `happened` on `connection`, which this loop holds, then what other loops noted meanwhile, and lets go.
    private func serveHeld(_ connection: EpollConnection, _ happened: UInt32) {
        var happened = happened
        while true {
            if happened & EpollConnection.answerHandedBack != 0 { sendAnswer(connection) }
            if !connection.closed && happened & EPOLLOUT.rawValue != 0 { flush(connection) }
            if !connection.closed && happened & Self.readEvents != 0 { readable(connection) }
            guard let noted = connection.letGo() else { return }
            happened = noted
        }
    }

    private static func milliseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return UInt64(time.tv_sec) * 1000 + UInt64(time.tv_nsec) / 1_000_000
    }

    private func accept() {
        // A few at a time, so that the other loops take their share of a burst.
        var accepted = 0
        while accepted < 4 {
            accepted += 1
            guard engine.reserveConnectionSlot() else {
                // At the limit: leave the rest in the backlog until a connection closes.
                engine.pauseListening()
                return
            }
            let listening = engine.listener.withLock { $0.shutDown ? -1 : $0.descriptor }
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let descriptor =
                listening < 0
                ? -1
                : withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { mvvmr_accept_connection(listening, $0, &length) }
                }
            guard descriptor >= 0 else {
                let failure = errno
                engine.openConnections.subtract(1, ordering: .relaxed)
                if listening >= 0 && (failure == EMFILE || failure == ENFILE || failure == ENOBUFS || failure == ENOMEM) {
                    // Out of descriptors or memory: stop polling the socket (it stays readable, and would wake
                    // the loops at once, again and again) and try again at the next sweep.
                    engine.pauseListening(evenWithRoom: true)
                }
                return
            }
            let ip = Self.address(of: &address)
            guard engine.admitConnection(from: ip) else {
                close(descriptor)
                engine.openConnections.subtract(1, ordering: .relaxed)
                continue
            }
            var one: Int32 = 1
            _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            register(descriptor, from: ip)
        }
    }

    /// Adds an accepted connection (counted in the limits) to the engine's table and epoll set.
    private func register(_ descriptor: Int32, from remoteIP: IPAddress) {
        let generation = engine.nextGeneration.wrappingAdd(1, ordering: .relaxed).oldValue
        let connection = EpollConnection(descriptor: descriptor, generation: generation, remoteIP: remoteIP, now: now)
        // Held by this loop until it is in the set (the sweep passes it over), and in the table before: its first
        // event must find it.
        _ = connection.takeIfFree()
        engine.connections.withLock { $0[descriptor] = connection }
        var event = epoll_event()
        // Reading and writing, edge-triggered: an edge for writing comes only after the socket was full.
        event.events = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
        event.data.u64 = connection.token
        guard epoll_ctl(engine.epoll, EPOLL_CTL_ADD, descriptor, &event) == 0 else {
            connection.closed = true
            engine.connections.withLock { table in
                if table[descriptor] === connection { table[descriptor] = nil }
            }
            release(descriptor, from: remoteIP)
            return
        }
        // Bytes that arrived before it joined the set are reported by its first poll (EPOLL_CTL_ADD checks); an event
        // another loop took meanwhile was noted, and is served as it lets go.
        serveHeld(connection, 0)
    }

    private static func address(of storage: inout sockaddr_storage) -> IPAddress {
        withUnsafeBytes(of: &storage) { raw in
            let family = Int32(raw.load(as: sa_family_t.self))
            if family == AF_INET { return IPAddress(bytes: raw[4..<8]) }
            if family == AF_INET6 { return IPAddress(bytes: raw[8..<24]) }
            return .unknown
        }
    }

    /// Closes `connection` (its socket, its place in the limits); a request it was waiting for is completed when
    /// its answer comes (and finds the connection closed). The caller holds it (or no loop runs).
    private func closeConnection(_ connection: EpollConnection) {
        guard !connection.closed else { return }
        connection.closed = true
        // Out of the table first: an event another loop takes for it from now on finds nothing (and the descriptor,
        // once closed, may be a new connection's, which has another generation).
        engine.connections.withLock { table in
            if table[connection.descriptor] === connection { table[connection.descriptor] = nil }
        }
        var unused = epoll_event()
        _ = epoll_ctl(engine.epoll, EPOLL_CTL_DEL, connection.descriptor, &unused)
        release(connection.descriptor, from: connection.remoteIP)
        if connection.requestActive && connection.waiting == nil {
            connection.requestActive = false
            server.requestEnded()
        }
        endQueuedAnswers(connection)
        connection.received = []
        connection.unsent = []
        connection.unsentStart = 0
        engine.resumeListeningIfRoom()
    }

    /// Closes an accepted socket and gives back every count it holds: the engine's (`maxConnections`), its
    /// address's (`maxConnectionsPerIP`).
    private func release(_ descriptor: Int32, from remoteIP: IPAddress) {
        close(descriptor)
        engine.releaseConnection(from: remoteIP)
        engine.openConnections.subtract(1, ordering: .relaxed)
    }

    /// The connection's queued answers stop counting as active requests (they were sent, or it closed).
    private func endQueuedAnswers(_ connection: EpollConnection) {
        guard connection.answersUnsent > 0 else { return }
        server.requestsEnded(connection.answersUnsent)
        connection.answersUnsent = 0
    }

    /// Closes `connection` for missing a deadline.
    private func cut(_ connection: EpollConnection) {
        server.connectionsCutByEngine.add(1, ordering: .relaxed)
        closeConnection(connection)
    }

    /// Deadlines and inactivity, over every connection no loop holds now (one held is being served: its deadlines
    /// are looked at next time).
    private func sweep() {
        now = Self.milliseconds()
        engine.resumeListeningIfRoom()
        let all = engine.connections.withLock { Array($0.values) }
        for connection in all where connection.takeIfFree() {
            sweep(connection)
            serveHeld(connection, 0)
        }
    }

    private func sweep(_ connection: EpollConnection) {
        guard !connection.closed else { return }
        if connection.lingerUntil != 0 {
            if now >= connection.lingerUntil { closeConnection(connection) }
            return
        }
        switch connection.stage {
        case .waiting:
            return
        case .head where headTimeout > 0 && connection.unsentCount == 0 && elapsed(since: connection.stageStartedAt) >= headTimeout:
            cut(connection)
            return
        case .body where bodyTimeout > 0 && elapsed(since: connection.stageStartedAt) >= bodyTimeout:
            cut(connection)
            return
        default:
            break
        }
        if inactivityTimeout > 0 && elapsed(since: connection.lastActivity) >= inactivityTimeout { closeConnection(connection) }
    }

    /// Milliseconds since `stamp`, which another loop may have taken from a clock read a moment after this loop's
    /// `now` (0 then, not a wrapped difference that would count as a missed deadline).
    private func elapsed(since stamp: UInt64) -> UInt64 {
        now >= stamp ? now - stamp : 0
    }

    /// After the loops ended (no loop runs): closes every connection left, and completes the answers handed back
    /// meanwhile.
    func closeEverything() {
        now = Self.milliseconds()
        let all = engine.connections.withLock { Array($0.values) }
        for connection in all { closeConnection(connection) }
        while !engine.resumed.withLock({ $0.isEmpty }) { drainResumed() }
    }

    /// Takes a few of the answers other threads handed back, and serves each on its connection (or notes it for the
    /// loop that holds the connection). When more wait, another wake-up is written first, so that another loop takes
    /// them meanwhile (a store's commit hands back dozens at once).
    private func drainResumed() {
        var drained: UInt64 = 0
        _ = Glibc.read(engine.wake, &drained, 8)
        engine.wakePending.store(false, ordering: .sequentiallyConsistent)
        let (contexts, moreWait) = engine.resumed.withLock { list -> ([RequestContext], Bool) in
            if list.count <= Self.answersPerDrain {
                let taken = list
                list.removeAll(keepingCapacity: true)
                return (taken, false)
            }
            let taken = Array(list.prefix(Self.answersPerDrain))
            list.removeFirst(Self.answersPerDrain)
            return (taken, true)
        }
        if moreWait { engine.wakeALoop() }
        for context in contexts {
            guard let connection = context.epollConnection else { continue }
            serve(connection, EpollConnection.answerHandedBack)
        }
    }

    /// Sends the answer `connection` waits for, if it was given; the caller holds the connection.
    private func sendAnswer(_ connection: EpollConnection) {
        guard let context = connection.waiting else { return }
        let answer = context.withPhase { phase in HTTPServer.takeAnswer(&phase, immediate: nil) } ?? nil
        guard let (response, _) = answer else { return }
        if context.isListedAsWaiting {
            server.waiting.remove(context)
            context.isListedAsWaiting = false
        }
        connection.waiting = nil
        connection.stage = .head
        if connection.closed {
            // The client left while its answer was awaited.
            if connection.requestActive {
                connection.requestActive = false
                server.requestEnded()
            }
            return
        }
        queue(
            response, connection, keepAlive: connection.waitingKeepAlive, isHead: connection.waitingIsHead,
            isHTTP10: connection.waitingIsHTTP10)
        // Requests that arrived behind it.
        send(connection)
        readOn(connection)
    }

    // MARK: - Reading

    private func readable(_ connection: EpollConnection) {
        if connection.lingerUntil != 0 {
            dropLingering(connection)
            return
        }
        if !canRead(connection) {
            // Read once the answers are out (or never: the connection closes after them). A client that hung up
            // is seen then, or by the answer's send.
            connection.readPending = true
            return
        }
        connection.readPending = false
        while !connection.closed {
            let received = recv(connection.descriptor, input, inputCapacity, 0)
            if received == 0 {
                closeConnection(connection)
                return
            }
            if received < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { closeConnection(connection) }
                return
            }
            connection.lastActivity = now
            if connection.received.isEmpty {
                let used = consume(UnsafeRawBufferPointer(start: input, count: received), connection)
                if used < received && !connection.closed && !connection.closeAfterWrite {
                    connection.received = Array(UnsafeRawBufferPointer(start: input + used, count: received - used))
                }
            } else {
                connection.received.append(contentsOf: UnsafeRawBufferPointer(start: input, count: received))
                consumeReceived(connection)
            }
            send(connection)
            pump(connection)
            if connection.closed || connection.lingerUntil != 0 { return }
            if !canRead(connection) {
                // Edge-triggered: bytes may still wait in the socket; they are read after the answers.
                if received == inputCapacity { connection.readPending = true }
                return
            }
            // A short read emptied the socket: its next bytes raise a new edge.
            if received < inputCapacity { return }
        }
    }

    /// Whether the loop reads `connection` now: not while its request waits for an answer, while it closes after
    /// its answers, while answers wait for the socket, or while it holds more unread bytes than pipelined requests
    /// held back at the output limit and one incomplete head can account for.
    private func canRead(_ connection: EpollConnection) -> Bool {
        connection.stage != .waiting && !connection.closeAfterWrite && connection.unsentCount == 0
            && connection.received.count <= Self.outputLimit + headerLimit
    }

    /// Reads and answers what `connection.received` still holds, for as long as its answers go out at once.
    private func pump(_ connection: EpollConnection) {
        while !connection.closed && connection.stage != .waiting && !connection.closeAfterWrite
            && connection.unsentCount == 0 && !connection.received.isEmpty
        {
            let before = connection.received.count
            consumeReceived(connection)
            let progressed = connection.received.count != before || output.count > 0
            send(connection)
            if !progressed { return }
        }
    }

    /// Reads and drops what a refused client still sends, until it closes, the time is up or it sent too much.
    private func dropLingering(_ connection: EpollConnection) {
        while !connection.closed {
            let received = recv(connection.descriptor, input, inputCapacity, 0)
            if received < 0 && errno == EINTR { continue }
            if received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            connection.lingerBudget -= max(0, received)
            if received <= 0 || connection.lingerBudget <= 0 {
                closeConnection(connection)
                return
            }
        }
    }

    /// Reads what `connection.received` holds.
    private func consumeReceived(_ connection: EpollConnection) {
        let bytes = connection.received
        connection.received = []
        let used = bytes.withUnsafeBytes { consume($0, connection) }
        if used < bytes.count && !connection.closed && !connection.closeAfterWrite {
            connection.received = Array(bytes[used...])
        }
    }

    /// Reads and answers the requests in `bytes`, until one is incomplete or waits for its answer.
    /// - Returns: how many bytes were used.
    private func consume(_ bytes: UnsafeRawBufferPointer, _ connection: EpollConnection) -> Int {
        var offset = 0
        while offset < bytes.count && connection.stage != .waiting && !connection.closeAfterWrite && !connection.closed
            && output.count + connection.unsentCount < Self.outputLimit
        {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            switch connection.stage {
            case .head:
                switch RequestHead.read(rest, headerLimit: headerLimit, maxBodyBytes: configuration.maxBodyBytes, packing: &packing) {
                case .incomplete:
                    return offset
                case .refused(let error):
                    refuse(error, connection)
                    return bytes.count
                case .complete(let head):
                    offset += head.length
                    offset += begin(head, in: rest, connection)
                }
            case .body:
                offset += readBody(UnsafeRawBufferPointer(rebasing: bytes[offset...]), connection)
            case .waiting:
                return offset
            }
        }
        return offset
    }

    /// Starts the request whose head was read from `bytes`: routes it, and reads its body (or dispatches it).
    /// - Returns: how many bytes after the head it used (a body that came whole with it).
    private func begin(_ head: RequestHead, in bytes: UnsafeRawBufferPointer, _ connection: EpollConnection) -> Int {
        connection.requestActive = true
        server.requestBegan()
        let methodBytes = UnsafeBufferPointer(rebasing: bytes.bindMemory(to: UInt8.self)[head.method])
        let method = Self.methodName(methodBytes)
        let route = server.routed(UnsafeBufferPointer(rebasing: bytes.bindMemory(to: UInt8.self)[head.path]), method: method)
        var request = EpollConnection.PendingRequest(
            method: method, isHead: method == "HEAD", route: route, values: head.values, keepAlive: head.keepAlive,
            isHTTP10: head.isHTTP10, bodyRemaining: 0, chunked: nil)
        switch head.framing {
        case .noBody:
            dispatch(request, connection, body: [])
            return 0
        case .contentLength(let length):
            let available = bytes.count - head.length
            if length == 0 || length <= UInt64(available) {
                // The whole body came with the head, as nearly always: dispatched from here, nothing kept.
                let bodyLength = Int(length)
                let body = bodyLength == 0 ? [] : Array(UnsafeRawBufferPointer(rebasing: bytes[head.length..<head.length + bodyLength]))
                dispatch(request, connection, body: body)
                return bodyLength
            }
            request.bodyRemaining = Int(length)
        case .chunked:
            request.chunked = ChunkedBodyDecoder(limit: configuration.maxBodyBytes)
        }
        connection.pending = request
        connection.stage = .body
        connection.stageStartedAt = now
        connection.body = []
        if head.expectsContinue && bytes.count == head.length { output.append("HTTP/1.1 100 Continue\r\n\r\n") }
        return 0
    }

    /// Reads body bytes of the pending request; dispatches it once whole.
    /// - Returns: how many bytes were used.
    private func readBody(_ bytes: UnsafeRawBufferPointer, _ connection: EpollConnection) -> Int {
        // Taken out of the connection, so that the decoder's body has one owner and grows in place.
        guard var request = connection.pending.take() else { return bytes.count }
        if var decoder = request.chunked {
            request.chunked = nil
            let progress = decoder.read(bytes)
            switch progress {
            case .needsMore:
                request.chunked = decoder
                connection.pending = request
                return bytes.count
            case .complete(let used):
                let body = decoder.takeBody()
                dispatch(request, connection, body: body)
                return used
            case .tooLarge:
                connection.pending = request
                refuse(.payloadTooLarge(limit: configuration.maxBodyBytes), connection)
                return bytes.count
            case .malformed:
                connection.pending = request
                refuse(.malformedRequest(.invalidChunkedBody), connection)
                return bytes.count
            }
        }
        let taken = min(request.bodyRemaining, bytes.count)
        if connection.body.isEmpty && taken == request.bodyRemaining {
            // The whole body in one piece, as nearly always.
            connection.body = Array(UnsafeRawBufferPointer(rebasing: bytes[0..<taken]))
        } else {
            // Room for what came, or at most 64 KiB ahead: a declared length reserves nothing it did not send.
            if connection.body.isEmpty { connection.body.reserveCapacity(min(request.bodyRemaining, max(taken, 64 * 1024))) }
            connection.body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<taken]))
        }
        request.bodyRemaining -= taken
        if request.bodyRemaining == 0 {
            let body = connection.body
            connection.body = []
            dispatch(request, connection, body: body)
        } else {
            connection.pending = request
        }
        return taken
    }

    private static func methodName(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        switch bytes.count {
        case 3 where bytes[0] == UInt8(ascii: "G") && bytes[1] == UInt8(ascii: "E") && bytes[2] == UInt8(ascii: "T"): "GET"
        case 4 where bytes[0] == UInt8(ascii: "P") && bytes[1] == UInt8(ascii: "O") && bytes[2] == UInt8(ascii: "S")
            && bytes[3] == UInt8(ascii: "T"): "POST"
        case 4 where bytes[0] == UInt8(ascii: "H") && bytes[1] == UInt8(ascii: "E") && bytes[2] == UInt8(ascii: "A")
            && bytes[3] == UInt8(ascii: "D"): "HEAD"
        default: String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Answers `error` and closes the connection after it: nothing more it sent is read.
    private func refuse(_ error: HTTPError, _ connection: EpollConnection) {
        if !connection.requestActive {
            connection.requestActive = true
            server.requestBegan()
        }
        connection.pending = nil
        connection.body = []
        connection.received = []
        connection.refused = true
        queue(error.response, connection, keepAlive: false, isHead: false, isHTTP10: false)
    }

    // MARK: - Dispatch

    private func dispatch(_ request: borrowing EpollConnection.PendingRequest, _ connection: EpollConnection, body: [UInt8]) {
        connection.stage = .head
        let keepAlive = request.keepAlive
        guard let route = request.route else {
            queue(HTTPError.invalidPath.response, connection, keepAlive: keepAlive, isHead: request.isHead, isHTTP10: request.isHTTP10)
            return
        }
        switch route.resolution {
        case .notFound:
            queue(HTTPError.notFound.response, connection, keepAlive: keepAlive, isHead: request.isHead, isHTTP10: request.isHTTP10)
        case .methodNotAllowed(let allowed):
            queue(
                HTTPError.methodNotAllowed(allowed: allowed).response, connection, keepAlive: keepAlive, isHead: request.isHead,
                isHTTP10: request.isHTTP10)
        case .matched(let handler, let parameters):
            let values = RequestValues(packed: request.values)
            let httpRequest = HTTPRequest(
                method: request.method, rawPath: route.rawPath, pathSegments: route.segments, pathParameters: parameters,
                query: values.query, headers: values.headers, cookies: values.cookies, body: body,
                remoteIP: connection.remoteIP)
            switch handler {
            case .synchronous(let handle):
                queue(HTTPServer.answerNow(handle, httpRequest), connection, keepAlive: keepAlive, isHead: request.isHead, isHTTP10: request.isHTTP10)
            case .asynchronous(let handle):
                let context = RequestContext(engine: engine)
                // Before any other thread can see the context: the loop that takes its answer finds the connection so.
                context.epollConnection = connection
                context.beginWaiting()
                guard server.waiting.admit(context) else {
                    queue(HTTPError.draining.response, connection, keepAlive: false, isHead: request.isHead, isHTTP10: request.isHTTP10)
                    return
                }
                context.isListedAsWaiting = true
                wait(for: context, connection, request)
                HTTPServer.answerInTask(handle, httpRequest, context)
            case .deferred(let handle):
                guard server.waiting.isAdmitting else {
                    queue(HTTPError.draining.response, connection, keepAlive: false, isHead: request.isHead, isHTTP10: request.isHTTP10)
                    return
                }
                let context = RequestContext(engine: engine)
                context.epollConnection = connection
                context.beginWaiting(.handling)
                let immediate: HTTPResponse?
                do {
                    immediate = try handle(httpRequest, DeferredResponder(context: context))
                } catch {
                    immediate = HTTPServer.response(for: error)
                }
                if let (now, _) = context.withPhase({ phase in HTTPServer.takeAnswer(&phase, immediate: immediate) }) ?? nil {
                    queue(now, connection, keepAlive: keepAlive, isHead: request.isHead, isHTTP10: request.isHTTP10)
                    return
                }
                // The answer comes later: listed, so that a stopping server answers it.
                guard server.waiting.admit(context) else {
                    let refused = HTTPError.draining.response
                    let (now, _) = (context.withPhase { phase in HTTPServer.takeAnswer(&phase, immediate: refused) } ?? nil) ?? (refused, nil)
                    queue(now, connection, keepAlive: false, isHead: request.isHead, isHTTP10: request.isHTTP10)
                    return
                }
                context.isListedAsWaiting = true
                wait(for: context, connection, request)
                // An answer given since the handler returned is in the phase (`.ready`) and was handed to `resume`,
                // or is handed there once the phase is `.waiting`.
                let answeredMeanwhile = context.withPhase { phase -> Bool in
                    if case .handling = phase {
                        phase = .waiting
                        return false
                    }
                    if case .ready = phase { return true }
                    return false
                } ?? false
                if answeredMeanwhile { engine.resume(context) }
            }
        }
    }

    private func wait(for context: RequestContext, _ connection: EpollConnection, _ request: EpollConnection.PendingRequest) {
        connection.waiting = context
        connection.waitingKeepAlive = request.keepAlive
        connection.waitingIsHead = request.isHead
        connection.waitingIsHTTP10 = request.isHTTP10
        connection.stage = .waiting
    }

    // MARK: - Writing

    /// Queues `response` in this loop's output for `connection` (or hands an event stream its socket).
    private func queue(_ response: HTTPResponse, _ connection: EpollConnection, keepAlive: Bool, isHead: Bool, isHTTP10: Bool) {
        if connection.requestActive {
            // Still active until its bytes are all sent (``answersSent(_:)``).
            connection.requestActive = false
            connection.answersUnsent += 1
        }
        connection.stage = .head
        connection.stageStartedAt = now
        switch response.body {
        case .bytes(let body):
            var closes = !keepAlive || server.isDraining
            writeHead(status: response.status, headers: response.headers, closes: &closes, keepAliveHTTP10: isHTTP10)
            let hasBody = !(response.status == 204 || response.status == 304 || response.status < 200)
            if hasBody {
                output.append("Content-Length: ")
                output.append(decimal: body.count)
                output.append("\r\n")
            }
            output.append("\r\n")
            if hasBody && !isHead { body.withUnsafeBytes { if let base = $0.baseAddress { output.append(base, $0.count) } } }
            if closes { connection.closeAfterWrite = true }
        case .stream(let stream):
            takeOver(stream, response: response, connection, isHead: isHead)
        }
    }

    private func writeHead(status: Int, headers: HTTPHeaders, closes: inout Bool, keepAliveHTTP10: Bool) {
        refreshDate()
        let code = UInt32(clamping: max(100, min(999, status)))
        output.append("HTTP/1.1 ")
        output.append(decimal: Int(code))
        output.append(byte: 0x20)
        if let reason = MHD_get_reason_phrase_for(code) { output.append(UnsafeRawPointer(reason), strlen(reason)) }
        output.append("\r\n")
        dateLine.withUnsafeBytes { if let base = $0.baseAddress { output.append(base, $0.count) } }
        if appendFields(headers) { closes = true }
        if closes {
            output.append("Connection: close\r\n")
        } else if keepAliveHTTP10 {
            output.append("Connection: keep-alive\r\n")
        }
    }

    /// Appends a response's header fields, leaving out those the server writes itself (`Connection`,
    /// `Content-Length`, `Transfer-Encoding`, `Date`) and any with a CR or LF in it.
    /// - Returns: whether the fields asked for the connection's close (`Connection: close`).
    private func appendFields(_ headers: HTTPHeaders) -> Bool {
        guard let list = headers.fieldList else { return render(headers.fields) }
        if list.isEmpty { return false }
        let address = list.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        for index in renderedFields.indices
        where renderedFields[index].withUnsafeBufferPointer({ UnsafeRawPointer($0.baseAddress) }) == address {
            let block = renderedBlocks[index]
            block.bytes.withUnsafeBytes { if let base = $0.baseAddress { output.append(base, $0.count) } }
            return block.closes
        }
        let start = output.count
        let closes = render(list)
        let block = Array(UnsafeRawBufferPointer(rebasing: output.bytes[start...]))
        if renderedFields.count < 8 {
            renderedFields.append(list)
            renderedBlocks.append((block, closes))
        } else {
            renderedFields[nextRendered] = list
            renderedBlocks[nextRendered] = (block, closes)
            nextRendered = (nextRendered + 1) % 8
        }
        return closes
    }

    private func render(_ fields: [HTTPHeader]) -> Bool {
        var closes = false
        for field in fields {
            if field.name.utf8.count == 10 && HTTPHeaders.equalIgnoringASCIICase(field.name, "connection")
                && field.value.lowercased().contains("close")
            {
                closes = true
            }
            guard HTTPServer.isWrittenAsGiven(field) else { continue }
            output.append(field.name)
            output.append(": ")
            output.append(field.value)
            output.append("\r\n")
        }
        return closes
    }

    private func refreshDate() {
        var wall = time_t()
        time(&wall)
        let second = Int(wall)
        guard second != dateSecond else { return }
        dateSecond = second
        var date = [CChar](repeating: 0, count: 64)
        let length = date.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { mvvmr_http_date($0, buffer.count) } ?? 0
        }
        dateLine = Array("Date: ".utf8) + date.prefix(length).map { UInt8(bitPattern: $0) } + [13, 10]
    }

    /// Hands `connection`'s socket to `stream` (see ``HTTPServer/admitTakenOverStream(_:address:)``): answers
    /// queued before it are sent first.
    private func takeOver(_ stream: EventStream, response: HTTPResponse, _ connection: EpollConnection, isHead: Bool) {
        send(connection)
        guard !connection.closed else {
            stream.finish()
            return
        }
        guard connection.unsentCount == 0 else {
            // Earlier answers the client has not taken yet: the stream's head cannot go out behind them.
            stream.finish()
            connection.refused = true
            queue(HTTPError.streamNotServed.response, connection, keepAlive: false, isHead: isHead, isHTTP10: false)
            return
        }
        switch server.admitTakenOverStream(stream, address: connection.remoteIP) {
        case .refused(let error):
            stream.finish()
            queue(error.response, connection, keepAlive: true, isHead: isHead, isHTTP10: false)
            return
        case .leftToTheLibrary:
            // The server is stopping, or its watcher thread could not start (nothing could watch the stream).
            stream.finish()
            let error = server.isDraining ? HTTPError.draining : HTTPError.streamNotServed
            queue(error.response, connection, keepAlive: false, isHead: isHead, isHTTP10: false)
            return
        case .admitted:
            break
        }
        let socket = mvvmr_duplicate_socket(connection.descriptor)
        let address = connection.remoteIP
        let key = ObjectIdentifier(stream)
        server.requestBegan()  // the stream counts as a request until it is over (released with it)
        let taken =
            socket >= 0
            && stream.takeOver(
                socket: socket, head: HTTPServer.streamHead(for: response), headOnly: isHead, watcher: server.watcher
            ) { [weak server] in
                server?.releaseTakenOverStream(key, address: address)
            }
        guard taken else {
            if socket >= 0 { close(socket) }
            server.releaseTakenOverStream(key, address: address)
            stream.finish()
            closeConnection(connection)
            return
        }
        // The stream owns the socket now, through its duplicate: the loop lets go of its descriptor.
        closeConnection(connection)
    }

    /// Sends this loop's output on `connection`; what the socket does not take waits for it to be writable.
    private func send(_ connection: EpollConnection) {
        defer {
            output.count = 0
            // A burst of large answers grew it: back to its usual size.
            if output.capacity > 4 * Self.outputLimit { output = ByteWriter(capacity: 16 * 1024) }
        }
        guard !connection.closed else { return }
        if output.count > 0 {
            if connection.unsentCount > 0 {
                if connection.unsentStart > connection.unsent.count / 2 {
                    connection.unsent.removeFirst(connection.unsentStart)
                    connection.unsentStart = 0
                }
                connection.unsent.append(contentsOf: output.bytes)
                return
            }
            var sent = Glibc.send(connection.descriptor, output.base, output.count, Int32(MSG_NOSIGNAL))
            // Interrupted, no edge for writing would come: sent again at once.
            while sent < 0 && errno == EINTR { sent = Glibc.send(connection.descriptor, output.base, output.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK {
                closeConnection(connection)
                return
            }
            let taken = max(0, sent)
            if taken > 0 { connection.lastActivity = now }
            if taken < output.count {
                connection.unsent = Array(UnsafeRawBufferPointer(rebasing: output.bytes[taken...]))
                connection.unsentStart = 0
                // The socket is full: its edge for writing comes once it takes more (``flush(_:)``).
                return
            }
        }
        if connection.unsentCount == 0 { answersSent(connection) }
    }

    /// Everything queued for `connection` is sent: its answers stop counting as active requests, and a connection
    /// that closes after them closes (or lingers, after a refusal).
    private func answersSent(_ connection: EpollConnection) {
        endQueuedAnswers(connection)
        guard connection.closeAfterWrite, connection.stage != .waiting else { return }
        if connection.refused {
            // Closed with unread bytes in the socket, the connection would be reset, and the client could lose the
            // refusal before reading it: the sending side closes first, and what still comes is read and dropped.
            _ = shutdown(connection.descriptor, Int32(SHUT_WR))
            connection.lingerUntil = now + Self.lingerMilliseconds
            connection.lingerBudget = Self.lingerBytes
            dropLingering(connection)
        } else {
            closeConnection(connection)
        }
    }

    private func flush(_ connection: EpollConnection) {
        guard connection.unsentCount > 0, !connection.closed else { return }
        var sent = -1
        repeat {
            sent = connection.unsent.withUnsafeBytes { raw in
                Glibc.send(
                    connection.descriptor, raw.baseAddress.map { $0 + connection.unsentStart }, connection.unsentCount,
                    Int32(MSG_NOSIGNAL))
            }
        } while sent < 0 && errno == EINTR
        if sent < 0 {
            if errno != EAGAIN && errno != EWOULDBLOCK { closeConnection(connection) }
            return
        }
        if sent > 0 { connection.lastActivity = now }
        connection.unsentStart += sent
        guard connection.unsentCount == 0 else { return }
        connection.unsent = []
        connection.unsentStart = 0
        // The next request's head deadline runs from here, now that the client has its answers.
        if connection.stage == .head { connection.stageStartedAt = now }
        answersSent(connection)
        if connection.closed || connection.lingerUntil != 0 { return }
        // What arrived while the answers went out.
        readOn(connection)
    }

    /// Goes on with `connection` once it may read again: the requests already received, then the socket, if it
    /// became readable meanwhile.
    private func readOn(_ connection: EpollConnection) {
        pump(connection)
        if connection.readPending && canRead(connection) && !connection.closed { readable(connection) }
    }
}
