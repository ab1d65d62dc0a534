internal import CMicroHTTPD
import Locking
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// MicroHTTP's own HTTP/1.1 engine (``HTTPServerConfiguration/Engine/epoll``): one loop per thread, each with an
/// epoll set of its connections, edge-triggered. The loops poll one listening socket (`EPOLLEXCLUSIVE`: one loop is
/// woken per arrival); the loop that accepts a connection keeps it only if no other loop has fewer, and otherwise
/// hands it to the loop with the fewest (``EpollLoop/adopt(_:from:)``), so that the loops' connections stay within one
/// of each other: the kernel wakes whichever loop is idle, which under a burst of connects gave one loop two or three
/// times the other's, and that loop's requests waited the longer.
///
/// A loop reads a connection's bytes into a buffer of its own, reads whole requests out of them (``RequestHead``,
/// ``ChunkedBodyDecoder``), hands each to its route, and writes the answers of everything it read in one `send`.
/// A request answered later (an asynchronous or deferred handler) leaves its connection waiting, unread, until
/// the answer is handed back (``resume(_:)``): the loop is woken through an eventfd only when it may be asleep.
/// Deadlines (the head's, the body's, inactivity) are checked by each loop over its own connections, ten times a
/// second. Event streams are taken over as under libmicrohttpd: the stream gets the socket, the watcher watches it.
final class EpollEngine: @unchecked Sendable {
    // @unchecked Sendable: the loops' state is each loop's own (see EpollLoop); what is shared is atomic or locked.

    /// The server the engine serves; it stops the engine (and joins its threads) before it can go away.
    unowned(unsafe) let server: HTTPServer
    let configuration: HTTPServerConfiguration
    private(set) var loops: [EpollLoop] = []
    private var threads: [pthread_t] = []
    /// The listening socket, which every loop polls (`EPOLLEXCLUSIVE`: one loop is woken per connection).
    private var listening: Int32 = -1
    private let listeningShutDown = Atomic<Bool>(false)
    /// Connections open on every loop (held to `maxConnections`).
    let openConnections = Atomic<Int>(0)
    /// Connections open per client address (held to `maxConnectionsPerIP`).
    let connectionsByAddress = Locked<[IPAddress: Int]>([:])

    init(server: HTTPServer, configuration: HTTPServerConfiguration) {
        self.server = server
        self.configuration = configuration
    }

    /// Binds the listening socket and starts the loops.
    /// - Returns: the port bound.
    func start(address: BindAddress) throws(HTTPServerError) -> Int {
        guard let socket = Self.listeningSocket(address: address, port: configuration.port, backlog: configuration.listenBacklog) else {
            throw HTTPServerError(
                code: "start_failed",
                message: "Could not listen on \(configuration.host):\(configuration.port) (in use, or not allowed).")
        }
        listening = socket
        loops = (0..<max(1, configuration.threadCount)).map { _ in EpollLoop(engine: self, listening: socket) }
        for loop in loops {
            guard loop.isReady, case .success(let thread) = Threads.start({ loop.run() }) else {
                stop()
                throw HTTPServerError(code: "start_failed", message: "Could not start the server's threads.")
            }
            threads.append(thread)
        }
        return Self.boundPort(of: socket)
    }

    /// Refuses new connections from now on: the listening socket is shut down (a client's connect is reset) and
    /// each loop stops polling it; ``stop()`` closes it.
    func stopListening() {
        guard listening >= 0, !listeningShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = shutdown(listening, Int32(SHUT_RDWR))
        for loop in loops { loop.stopListening() }
    }

    /// Closes every connection, ends the loops and waits for their threads.
    func stop() {
        for loop in loops { loop.requestStop() }
        for thread in threads { pthread_join(thread, nil) }
        threads = []
        if listening >= 0 {
            close(listening)
            listening = -1
        }
    }

    /// The most connections every loop's together may hold (`maxConnections`, at least one).
    var connectionLimit: Int { max(1, configuration.maxConnections) }

    /// Counts one more open connection, unless every loop's together are at ``connectionLimit``.
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

    /// Chooses the loop a connection `accepting` just accepted goes to, and counts it there: the loop with the fewest
    /// connections, `accepting` itself when no other has fewer. The count is raised only from the value the choice
    /// saw (compare-and-exchange; chosen again otherwise), so that loops accepting at the same moment do not both
    /// add to the same one; closes only lower the counts.
    func assignConnection(acceptedBy accepting: EpollLoop) -> EpollLoop {
        while true {
            var chosen = accepting
            var fewest = accepting.connectionCount.load(ordering: .relaxed)
            for loop in loops where loop !== accepting {
                let count = loop.connectionCount.load(ordering: .relaxed)
                if count < fewest {
                    chosen = loop
                    fewest = count
                }
            }
            if chosen.connectionCount.compareExchange(expected: fewest, desired: fewest + 1, ordering: .relaxed).exchanged {
                return chosen
            }
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

/// One connection of a loop; only its loop's thread touches it.
final class EpollConnection {
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

    init(descriptor: Int32, remoteIP: IPAddress, now: UInt64) {
        self.descriptor = descriptor
        self.remoteIP = remoteIP
        stageStartedAt = now
        lastActivity = now
    }
}

/// One loop and its thread. Everything not marked shared is touched by the loop's thread alone.
final class EpollLoop: @unchecked Sendable {
    unowned(unsafe) let engine: EpollEngine
    private unowned(unsafe) let server: HTTPServer
    private let configuration: HTTPServerConfiguration
    /// The engine's listening socket while this loop polls it (-1 once it stopped listening; the engine closes it).
    private var listening: Int32
    private let listeningStopped = Atomic<Bool>(false)
    private var listeningPaused = false
    private let epoll: Int32
    private let wake: Int32
    private var connections: [Int32: EpollConnection] = [:]
    /// Shared: answered requests handed back by other threads.
    private let resumed = Locked<[RequestContext]>([])
    /// Shared: connections accepted by another loop and handed to this one, not yet in its epoll set. Closed (no
    /// hand-off taken) until the loop runs, and again once it ended.
    private let adopted = Locked<(connections: [(descriptor: Int32, remoteIP: IPAddress)], closed: Bool)>(([], true))
    /// Shared: the connections this loop holds, with those handed to it and not yet taken in (read by the other
    /// loops to choose where a new connection goes).
    let connectionCount = Atomic<Int>(0)
    /// Shared: the loop was woken and has not drained `resumed` and `adopted` since.
    private let wakePending = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let inputCapacity = 64 * 1024
    private let input: UnsafeMutableRawPointer
    private var output = ByteWriter(capacity: 16 * 1024)
    private var packing = ByteWriter(capacity: 4 * 1024)
    private var now: UInt64 = 0
    private var nextSweep: UInt64 = 0
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

    private static let listenToken: UInt64 = 0
    private static let wakeToken: UInt64 = 1
    private static let sweepInterval: UInt64 = 100
    /// The most answer bytes a connection may have queued before the loop stops reading its pipelined requests
    /// (it reads on once they are sent), so that a client cannot make the loop hold the answers of thousands of
    /// requests sent in one go.
    private static let outputLimit = 256 * 1024
    /// How long, and for how many more bytes, a refused connection is read (and dropped) before it closes.
    private static let lingerMilliseconds: UInt64 = 2000
    private static let lingerBytes = 256 * 1024
    /// Set once `run` closed the epoll set and eventfd (a loop that never ran closes them in `deinit`).
    private var descriptorsClosed = false

    init(engine: EpollEngine, listening: Int32) {
        self.engine = engine
        server = engine.server
        configuration = engine.configuration
        self.listening = listening
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        input = UnsafeMutableRawPointer.allocate(byteCount: inputCapacity, alignment: 16)
        headerLimit = max(4096, configuration.maxHeaderBytes)
        headTimeout = UInt64(max(0, configuration.requestHeaderTimeoutSeconds)) * 1000
        bodyTimeout = UInt64(max(0, configuration.requestBodyTimeoutSeconds)) * 1000
        inactivityTimeout = UInt64(max(0, configuration.connectionTimeoutSeconds)) * 1000
        if epoll >= 0 && wake >= 0 {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue
            event.data.u64 = Self.listenToken
            _ = epoll_ctl(epoll, EPOLL_CTL_ADD, listening, &event)
            event.events = EPOLLIN.rawValue
            event.data.u64 = Self.wakeToken
            _ = epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &event)
        }
    }

    deinit {
        input.deallocate()
        if !descriptorsClosed {
            if epoll >= 0 { close(epoll) }
            if wake >= 0 { close(wake) }
        }
    }

    /// Whether the loop has its epoll set and eventfd.
    var isReady: Bool { epoll >= 0 && wake >= 0 }

    private func wakeUp() {
        var one: UInt64 = 1
        _ = Glibc.write(wake, &one, 8)
    }

    /// From any thread: the listening socket was shut down (see ``EpollEngine/stopListening()``); the loop lets go
    /// of it.
    func stopListening() {
        listeningStopped.store(true, ordering: .releasing)
        wakeUp()
    }

    /// From any thread: close everything and end the loop.
    func requestStop() {
        stopping.store(true, ordering: .releasing)
        wakeUp()
    }

    /// From another loop's thread: a connection it accepted (counted in the limits, and in this loop's
    /// `connectionCount` by ``EpollEngine/assignConnection(acceptedBy:)``) is this loop's from now on.
    /// - Returns: false if this loop is not running (not yet, or no more): the caller keeps the connection.
    func adopt(_ descriptor: Int32, from remoteIP: IPAddress) -> Bool {
        let taken = adopted.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.connections.append((descriptor, remoteIP))
            return true
        }
        guard taken else { return false }
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) { wakeUp() }
        return true
    }

    /// From any thread: `context`'s answer is ready (its phase holds it); the loop sends it.
    func resume(_ context: RequestContext) {
        resumed.withLock { $0.append(context) }
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) { wakeUp() }
    }

    // MARK: - The loop

    func run() {
        mvvmr_name_current_thread("MicroHTTP-loop")
        adopted.withLock { $0.closed = false }
        let capacity = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        now = Self.milliseconds()
        nextSweep = now + Self.sweepInterval
        while !stopping.load(ordering: .acquiring) {
            let timeout = Int32(clamping: nextSweep > now ? nextSweep - now : 0)
            let count = epoll_wait(epoll, events, Int32(capacity), timeout)
            now = Self.milliseconds()
            if count > 0 {
                for index in 0..<Int(count) {
                    let event = events[index]
                    switch event.data.u64 {
                    case Self.listenToken:
                        accept()
                    case Self.wakeToken:
                        drainHandOffs()
                    default:
                        guard let connection = connections[Int32(truncatingIfNeeded: event.data.u64 >> 8)] else { continue }
                        let flags = event.events
                        if flags & EPOLLOUT.rawValue != 0 { flush(connection) }
                        if flags & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
                            readable(connection)
                        }
                    }
                }
            }
            if now >= nextSweep {
                sweep()
                nextSweep = now + Self.sweepInterval
            }
        }
        for connection in Array(connections.values) { closeConnection(connection) }
        let orphans = adopted.withLock { state in
            state.closed = true
            return state.connections
        }
        for (descriptor, remoteIP) in orphans { release(descriptor, from: remoteIP) }
        drainHandOffs()
        closeListening()
        close(epoll)
        close(wake)
        descriptorsClosed = true
    }

    private static func milliseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return UInt64(time.tv_sec) * 1000 + UInt64(time.tv_nsec) / 1_000_000
    }

    private static func token(of descriptor: Int32) -> UInt64 {
        UInt64(UInt32(bitPattern: descriptor)) << 8 | 2
    }

    private func closeListening() {
        guard listening >= 0 else { return }
        var unused = epoll_event()
        if !listeningPaused { _ = epoll_ctl(epoll, EPOLL_CTL_DEL, listening, &unused) }
        listening = -1
    }

    private func accept() {
        if listeningStopped.load(ordering: .acquiring) {
            closeListening()
            return
        }
        // A few at a time, so that the other loops take their share of a burst.
        var accepted = 0
        while listening >= 0 && accepted < 4 {
            accepted += 1
            guard engine.reserveConnectionSlot() else {
                // At the limit: leave the rest in the backlog until a connection closes.
                pauseListening()
                return
            }
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let descriptor = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { mvvmr_accept_connection(listening, $0, &length) }
            }
            guard descriptor >= 0 else {
                let failure = errno
                engine.openConnections.subtract(1, ordering: .relaxed)
                if failure == EINVAL {
                    closeListening()  // shut down by stopListening
                } else if failure == EMFILE || failure == ENFILE || failure == ENOBUFS || failure == ENOMEM {
                    // Out of descriptors or memory: stop polling the socket (it stays readable, and would wake
                    // this loop at once, again and again) and try again at the next sweep.
                    pauseListening()
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
            let target = engine.assignConnection(acceptedBy: self)
            if target !== self {
                if target.adopt(descriptor, from: ip) { continue }
                // That loop is not running: this one keeps the connection.
                target.connectionCount.subtract(1, ordering: .relaxed)
                connectionCount.add(1, ordering: .relaxed)
            }
            addToEpollSet(descriptor, from: ip)
        }
    }

    /// Adds an accepted connection (counted in `connectionCount` and the limits) to this loop's epoll set.
    private func addToEpollSet(_ descriptor: Int32, from remoteIP: IPAddress) {
        let connection = EpollConnection(descriptor: descriptor, remoteIP: remoteIP, now: now)
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
        event.data.u64 = Self.token(of: descriptor)
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event) == 0 else {
            release(descriptor, from: remoteIP)
            return
        }
        // Bytes that arrived before it joined the set are reported by this first poll (EPOLL_CTL_ADD checks).
        connections[descriptor] = connection
    }

    private func pauseListening() {
        guard !listeningPaused, listening >= 0 else { return }
        var unused = epoll_event()
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, listening, &unused)
        listeningPaused = true
    }

    private func resumeListeningIfRoom() {
        guard listeningPaused, listening >= 0, !listeningStopped.load(ordering: .acquiring),
            engine.openConnections.load(ordering: .relaxed) < engine.connectionLimit
        else { return }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue
        event.data.u64 = Self.listenToken
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, listening, &event)
        listeningPaused = false
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
    /// its answer comes (and finds the connection closed).
    private func closeConnection(_ connection: EpollConnection) {
        guard !connection.closed else { return }
        connection.closed = true
        connections[connection.descriptor] = nil
        var unused = epoll_event()
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, connection.descriptor, &unused)
        release(connection.descriptor, from: connection.remoteIP)
        if connection.requestActive && connection.waiting == nil {
            connection.requestActive = false
            server.requestEnded()
        }
        endQueuedAnswers(connection)
        connection.received = []
        connection.unsent = []
        connection.unsentStart = 0
        resumeListeningIfRoom()
    }

    /// Closes an accepted socket of this loop's and gives back every count it holds: the loop's, the engine's
    /// (`maxConnections`), its address's (`maxConnectionsPerIP`).
    private func release(_ descriptor: Int32, from remoteIP: IPAddress) {
        close(descriptor)
        connectionCount.subtract(1, ordering: .relaxed)
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

    /// Deadlines and inactivity.
    private func sweep() {
        if listeningStopped.load(ordering: .acquiring) { closeListening() }
        resumeListeningIfRoom()
        for connection in Array(connections.values) {
            if connection.lingerUntil != 0 {
                if now >= connection.lingerUntil { closeConnection(connection) }
                continue
            }
            if connection.stage == .waiting { continue }
            switch connection.stage {
            case .head where headTimeout > 0 && connection.unsentCount == 0 && now &- connection.stageStartedAt >= headTimeout:
                cut(connection)
                continue
            case .body where bodyTimeout > 0 && now &- connection.stageStartedAt >= bodyTimeout:
                cut(connection)
                continue
            default:
                break
            }
            if inactivityTimeout > 0 && now &- connection.lastActivity >= inactivityTimeout { closeConnection(connection) }
        }
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
                let context = RequestContext(loop: self)
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
                let context = RequestContext(loop: self)
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
                if answeredMeanwhile { resume(context) }
            }
        }
    }

    private func wait(for context: RequestContext, _ connection: EpollConnection, _ request: EpollConnection.PendingRequest) {
        context.epollConnection = connection
        connection.waiting = context
        connection.waitingKeepAlive = request.keepAlive
        connection.waitingIsHead = request.isHead
        connection.waitingIsHTTP10 = request.isHTTP10
        connection.stage = .waiting
    }

    /// Takes in the connections other loops handed to this one, and sends the answers other threads handed back.
    private func drainHandOffs() {
        var drained: UInt64 = 0
        _ = Glibc.read(wake, &drained, 8)
        wakePending.store(false, ordering: .sequentiallyConsistent)
        let handed = adopted.withLock { state -> [(descriptor: Int32, remoteIP: IPAddress)] in
            guard !state.connections.isEmpty else { return [] }
            let taken = state.connections
            state.connections.removeAll(keepingCapacity: true)
            return taken
        }
        for (descriptor, remoteIP) in handed { addToEpollSet(descriptor, from: remoteIP) }
        let contexts = resumed.withLock { list -> [RequestContext] in
            let taken = list
            list.removeAll(keepingCapacity: true)
            return taken
        }
        for context in contexts {
            guard let connection = context.epollConnection else { continue }
            let answer = context.withPhase { phase in HTTPServer.takeAnswer(&phase, immediate: nil) } ?? nil
            guard let (response, _) = answer else { continue }
            context.epollConnection = nil
            if context.isListedAsWaiting {
                server.waiting.remove(context)
                context.isListedAsWaiting = false
            }
            guard connection.waiting === context else { continue }
            connection.waiting = nil
            connection.stage = .head
            if connection.closed {
                // The client left while its answer was awaited.
                if connection.requestActive {
                    connection.requestActive = false
                    server.requestEnded()
                }
                continue
            }
            queue(
                response, connection, keepAlive: connection.waitingKeepAlive, isHead: connection.waitingIsHead,
                isHTTP10: connection.waitingIsHTTP10)
            // Requests that arrived behind it.
            send(connection)
            readOn(connection)
        }
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
            let sent = Glibc.send(connection.descriptor, output.base, output.count, Int32(MSG_NOSIGNAL))
            if sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                closeConnection(connection)
                return
            }
            let taken = max(0, sent)
            if taken > 0 { connection.lastActivity = now }
            if taken < output.count {
                connection.unsent = Array(UnsafeRawBufferPointer(rebasing: output.bytes[taken...]))
                connection.unsentStart = 0
                setWritableInterest(connection, true)
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

    private func setWritableInterest(_ connection: EpollConnection, _ writable: Bool) {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue | (writable ? EPOLLOUT.rawValue : 0)
        event.data.u64 = Self.token(of: connection.descriptor)
        _ = epoll_ctl(epoll, EPOLL_CTL_MOD, connection.descriptor, &event)
    }

    private func flush(_ connection: EpollConnection) {
        guard connection.unsentCount > 0, !connection.closed else { return }
        let sent = connection.unsent.withUnsafeBytes { raw in
            Glibc.send(connection.descriptor, raw.baseAddress.map { $0 + connection.unsentStart }, connection.unsentCount, Int32(MSG_NOSIGNAL))
        }
        if sent < 0 {
            if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { closeConnection(connection) }
            return
        }
        if sent > 0 { connection.lastActivity = now }
        connection.unsentStart += sent
        guard connection.unsentCount == 0 else { return }
        connection.unsent = []
        connection.unsentStart = 0
        setWritableInterest(connection, false)
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
