// PROTOTYPE (branch epoll-prototype): an HTTP/1.1 engine of MicroHTTP's own, one epoll loop per thread, in place of
// libmicrohttpd, to measure what the action path and the SQLite path would gain. Switched on with
// MICROHTTP_ENGINE=epoll. Not hardened: no deadlines, no connection limits, no chunked bodies, no event streams.
internal import CMicroHTTPD
import Locking
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A prototype engine: `threadCount` loops, each with its own listening socket (SO_REUSEPORT) and epoll set.
final class EpollEngine: @unchecked Sendable {
    let router: HTTPRouter
    let configuration: HTTPServerConfiguration
    let routeCacheOwner: UInt64
    private(set) var loops: [EpollLoop] = []
    private var threads: [pthread_t] = []
    private(set) var port = 0

    init(router: HTTPRouter, configuration: HTTPServerConfiguration, routeCacheOwner: UInt64) {
        self.router = router
        self.configuration = configuration
        self.routeCacheOwner = routeCacheOwner
    }

    /// Binds and starts the loops; returns the bound port, or nil.
    func start() -> Int? {
        var boundPort = configuration.port
        for _ in 0..<max(1, configuration.threadCount) {
            guard let socket = Self.listeningSocket(port: boundPort, backlog: configuration.listenBacklog) else { return nil }
            if boundPort == 0 {
                var address = sockaddr_in()
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                _ = withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
                }
                boundPort = Int(UInt16(bigEndian: address.sin_port))
            }
            loops.append(EpollLoop(engine: self, listening: socket))
        }
        port = boundPort
        for loop in loops {
            guard case .success(let thread) = Threads.start({ loop.run() }) else { return nil }
            threads.append(thread)
        }
        return boundPort
    }

    func stop() {
        for loop in loops { loop.requestStop() }
        for thread in threads { pthread_join(thread, nil) }
        threads = []
    }

    private static func listeningSocket(port: Int, backlog: Int) -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return nil }
        var one: Int32 = 1
        _ = setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(socket, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(clamping: port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, Int32(clamping: backlog)) == 0 else {
            close(socket)
            return nil
        }
        return socket
    }
}

/// Bytes written into memory of its own, grown by doubling: an append is a copy, no generic call.
struct ByteWriter: ~Copyable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    var count = 0

    init(capacity: Int) {
        self.capacity = max(64, capacity)
        base = UnsafeMutablePointer<UInt8>.allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inline(__always)
    mutating func reserve(_ more: Int) {
        guard count + more > capacity else { return }
        var grown = capacity * 2
        while grown < count + more { grown *= 2 }
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        moved.update(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = grown
    }

    @inline(__always)
    mutating func append(_ pointer: UnsafeRawPointer, _ length: Int) {
        reserve(length)
        UnsafeMutableRawPointer(base + count).copyMemory(from: pointer, byteCount: length)
        count += length
    }

    @inline(__always)
    mutating func append(_ text: StaticString) {
        append(UnsafeRawPointer(text.utf8Start), text.utf8CodeUnitCount)
    }

    @inline(__always)
    mutating func append(byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ value: UInt32) {
        reserve(4)
        UnsafeMutableRawPointer(base + count).storeBytes(of: value, as: UInt32.self)
        count += 4
    }

    mutating func append(decimal value: Int) {
        reserve(20)
        var remaining = max(0, value)
        var digits = 0
        var probe = remaining
        repeat {
            digits += 1
            probe /= 10
        } while probe > 0
        var at = count + digits - 1
        repeat {
            base[at] = UInt8(48 + remaining % 10)
            remaining /= 10
            at -= 1
        } while remaining > 0
        count += digits
    }

    mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { bytes in
            if let address = bytes.baseAddress { append(UnsafeRawPointer(address), bytes.count) }
        }
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
}

/// One connection of a loop; touched only by its loop's thread.
final class EpollConnection {
    let descriptor: Int32
    let remoteIP: IPAddress
    /// Bytes received and not yet parsed (only when a request arrived in pieces).
    var pending: [UInt8] = []
    /// Bytes of answers not yet taken by the socket.
    var unsent: [UInt8] = []
    /// The request whose answer is awaited; no further request is parsed meanwhile.
    var waiting: RequestContext?
    /// Edge-triggered: readable while waiting, read once the answer went out.
    var readPending = false
    var closeAfterWrite = false
    var keepAliveOfWaiting = true
    var closed = false

    init(descriptor: Int32, remoteIP: IPAddress) {
        self.descriptor = descriptor
        self.remoteIP = remoteIP
    }
}

/// One thread's loop.
final class EpollLoop: @unchecked Sendable {
    unowned let engine: EpollEngine
    let listening: Int32
    let epoll: Int32
    let wake: Int32
    private var connections: [Int32: EpollConnection] = [:]
    /// Answered requests handed over by other threads.
    private let resumed = Locked<[RequestContext]>([])
    private let wakePending = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private var input = [UInt8](repeating: 0, count: 65536)
    private var output = ByteWriter(capacity: 16384)
    private var packing = ByteWriter(capacity: 4096)
    private var dateSecond = 0
    /// Header blocks rendered lately, by the storage of the field array they came from (held, so that the storage
    /// cannot be freed and its address taken by another array).
    private var renderedFields: [[HTTPHeader]] = []
    private var renderedBlocks: [[UInt8]] = []
    private var nextRendered = 0
    private var dateLine: [UInt8] = []

    static let listenToken: UInt64 = 0
    static let wakeToken: UInt64 = 1

    init(engine: EpollEngine, listening: Int32) {
        self.engine = engine
        self.listening = listening
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.listenToken
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, listening, &event)
        event.data.u64 = Self.wakeToken
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &event)
    }

    func requestStop() {
        stopping.store(true, ordering: .relaxed)
        var one: UInt64 = 1
        _ = Glibc.write(wake, &one, 8)
    }

    /// Called from any thread once a waiting request has its answer.
    func resume(_ context: RequestContext) {
        resumed.withLock { $0.append(context) }
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) {
            var one: UInt64 = 1
            _ = Glibc.write(wake, &one, 8)
        }
    }

    func run() {
        let capacity = 256
        var events = [epoll_event](repeating: epoll_event(), count: capacity)
        while !stopping.load(ordering: .relaxed) {
            let count = events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, Int32(capacity), 1000) }
            if count <= 0 { continue }
            for index in 0..<Int(count) {
                let event = events[index]
                switch event.data.u64 {
                case Self.listenToken: accept()
                case Self.wakeToken: drainResumed()
                default:
                    let descriptor = Int32(truncatingIfNeeded: event.data.u64 >> 8)
                    guard let connection = connections[descriptor] else { continue }
                    if event.events & EPOLLOUT.rawValue != 0 { flush(connection) }
                    if event.events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
                        readable(connection)
                    }
                }
            }
        }
        for (_, connection) in connections { close(connection.descriptor) }
        connections = [:]
        close(listening)
        close(epoll)
        close(wake)
    }

    private func accept() {
        while true {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let descriptor = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.accept(listening, $0, &length)
                }
            }
            guard descriptor >= 0 else { return }
            _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
            var one: Int32 = 1
            _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let ip: IPAddress = withUnsafeBytes(of: &address) { raw in
                let family = raw.load(as: sa_family_t.self)
                if family == sa_family_t(AF_INET) { return IPAddress(bytes: raw[4..<8]) }
                return IPAddress(bytes: raw[8..<24])
            }
            let connection = EpollConnection(descriptor: descriptor, remoteIP: ip)
            connections[descriptor] = connection
            var event = epoll_event()
            event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
            event.data.u64 = UInt64(UInt32(bitPattern: descriptor)) << 8 | 2
            _ = epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event)
        }
    }

    private func closeConnection(_ connection: EpollConnection) {
        guard !connection.closed else { return }
        connection.closed = true
        connections[connection.descriptor] = nil
        close(connection.descriptor)
    }

    private func readable(_ connection: EpollConnection) {
        if connection.waiting != nil {
            connection.readPending = true
            return
        }
        while !connection.closed {
            let received = input.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, $0.count, 0) }
            if received == 0 {
                closeConnection(connection)
                return
            }
            if received < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { closeConnection(connection) }
                return
            }
            output.count = 0
            if connection.pending.isEmpty {
                let used = input.withUnsafeBytes { parse(UnsafeRawBufferPointer(rebasing: $0[0..<received]), connection) }
                if used < received && !connection.closed { connection.pending = Array(input[used..<received]) }
            } else {
                connection.pending.append(contentsOf: input[0..<received])
                let bytes = connection.pending
                let used = bytes.withUnsafeBytes { parse($0, connection) }
                connection.pending = used < bytes.count ? Array(bytes[used...]) : []
            }
            send(connection)
            if connection.waiting != nil {
                // More bytes may wait in the socket: read them once the answer is out.
                if received == input.count { connection.readPending = true }
                return
            }
            // A short read emptied the socket: the next bytes raise a new edge.
            if received < input.count { return }
        }
    }

    /// Parses and answers whole requests in `bytes`; returns how many bytes were used.
    private func parse(_ bytes: UnsafeRawBufferPointer, _ connection: EpollConnection) -> Int {
        var offset = 0
        while offset < bytes.count, connection.waiting == nil, !connection.closeAfterWrite {
            guard let used = request(UnsafeRawBufferPointer(rebasing: bytes[offset...]), connection) else { break }
            offset += used
        }
        return offset
    }

    /// Handles the request at the start of `bytes`; returns its length, or nil when it is not all here.
    private func request(_ bytes: UnsafeRawBufferPointer, _ connection: EpollConnection) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let limit = max(4096, engine.configuration.maxHeaderBytes)
        guard let headEnd = Self.headEnd(base, bytes.count) else {
            if bytes.count > limit { fail(.headerFieldsTooLarge(limit: limit), connection) }
            return nil
        }
        let headLength = base.distance(to: UnsafeRawPointer(headEnd)) + 4
        if headLength > limit {
            fail(.headerFieldsTooLarge(limit: limit), connection)
            return nil
        }
        let head = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: headLength - 2)
        // Request line.
        var index = 0
        while index < head.count && head[index] != 0x20 { index += 1 }
        let methodRange = 0..<index
        index += 1
        let targetStart = index
        while index < head.count && head[index] != 0x20 && head[index] != 0x0D { index += 1 }
        let targetRange = targetStart..<index
        index += 1
        let versionStart = index
        while index < head.count && head[index] != 0x0D { index += 1 }
        let versionRange = versionStart..<index
        index += 2
        guard !methodRange.isEmpty, !targetRange.isEmpty, versionRange.count == 8,
            head[versionStart] == UInt8(ascii: "H"), head[versionStart + 5] == UInt8(ascii: "1")
        else {
            fail(.malformedRequest(.invalidFieldName), connection)
            return nil
        }
        let http10 = head[versionStart + 7] == UInt8(ascii: "0")
        // Header fields, packed as the C shim packs them.
        packing.count = 0
        var contentLength = 0
        var keepAlive = !http10
        var pathEnd = targetRange.upperBound
        var scan = targetRange.lowerBound
        while scan < targetRange.upperBound && head[scan] != UInt8(ascii: "?") { scan += 1 }
        pathEnd = scan
        while index < head.count {
            let lineStart = index
            let lineEnd = memchr(base + lineStart, 0x0D, head.count - lineStart).map { base.distance(to: UnsafeRawPointer($0)) } ?? head.count
            index = lineEnd + 2
            guard let colonAt = memchr(base + lineStart, 0x3A, lineEnd - lineStart) else { continue }
            let colon = base.distance(to: UnsafeRawPointer(colonAt))
            var valueStart = colon + 1
            while valueStart < lineEnd && (head[valueStart] == 0x20 || head[valueStart] == 0x09) { valueStart += 1 }
            var valueEnd = lineEnd
            while valueEnd > valueStart && (head[valueEnd - 1] == 0x20 || head[valueEnd - 1] == 0x09) { valueEnd -= 1 }
            let keyLength = colon - lineStart
            let valueLength = valueEnd - valueStart
            packing.append(byte: 1)
            packing.append(UInt32(keyLength))
            packing.append(UInt32(valueLength))
            packing.append(base + lineStart, keyLength)
            packing.append(base + valueStart, valueLength)
            if keyLength == 14, head[lineStart] | 0x20 == UInt8(ascii: "c"), head[lineStart + 8] | 0x20 == UInt8(ascii: "l") {
                var value = 0
                for position in valueStart..<valueEnd {
                    let digit = Int(head[position]) - 48
                    guard digit >= 0 && digit <= 9 else { break }
                    value = value > (Int.max - 9) / 10 ? Int.max : value * 10 + digit
                }
                contentLength = value
            } else if keyLength == 10, head[lineStart] | 0x20 == UInt8(ascii: "c"), head[lineStart + 3] | 0x20 == UInt8(ascii: "n") {
                let first = valueLength > 0 ? head[valueStart] | 0x20 : 0
                if first == UInt8(ascii: "c") { keepAlive = false }
                if first == UInt8(ascii: "k") { keepAlive = true }
            }
        }
        let values = PackedValues(bytes: Array(UnsafeBufferPointer(start: packing.base, count: packing.count)))
        switch RequestFraming.read(values) {
        case .failure(let problem):
            fail(.malformedRequest(problem), connection)
            return nil
        case .success(.chunked):
            fail(.malformedRequest(.unsupportedTransferEncoding), connection)
            return nil
        case .success:
            break
        }
        if contentLength > engine.configuration.maxBodyBytes {
            fail(.payloadTooLarge(limit: engine.configuration.maxBodyBytes), connection)
            return nil
        }
        guard bytes.count - headLength >= contentLength else { return nil }
        let body: [UInt8] = contentLength == 0 ? [] : Array(UnsafeRawBufferPointer(rebasing: bytes[headLength..<headLength + contentLength]))
        let rawPath = UnsafeBufferPointer(rebasing: head[targetRange.lowerBound..<pathEnd])
        let method = Self.methodName(UnsafeBufferPointer(rebasing: head[methodRange]))
        if !keepAlive { connection.closeAfterWrite = true }
        dispatch(method: method, rawPath: rawPath, values: values, body: body, connection, keepAlive: keepAlive)
        return headLength + contentLength
    }

    /// Where the first CR LF CR LF starts in `count` bytes at `base`.
    private static func headEnd(_ base: UnsafeRawPointer, _ count: Int) -> UnsafeRawPointer? {
        var offset = 3
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        while offset < count {
            guard let found = memchr(base + offset, 0x0A, count - offset) else { return nil }
            let at = base.distance(to: UnsafeRawPointer(found))
            if bytes[at - 1] == 0x0D && bytes[at - 2] == 0x0A && bytes[at - 3] == 0x0D { return base + (at - 3) }
            offset = at + 2
        }
        return nil
    }

    private static func methodName(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        if bytes.count == 4 && bytes[0] == UInt8(ascii: "P") && bytes[1] == UInt8(ascii: "O") { return "POST" }
        if bytes.count == 3 && bytes[0] == UInt8(ascii: "G") && bytes[1] == UInt8(ascii: "E") && bytes[2] == UInt8(ascii: "T") { return "GET" }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func fail(_ error: HTTPError, _ connection: EpollConnection) {
        connection.closeAfterWrite = true
        write(error.response, keepAlive: false)
    }

    private func routed(_ rawPath: UnsafeBufferPointer<UInt8>, method: String) -> RouteCache.Entry? {
        let owner = engine.routeCacheOwner
        let cache = rawPath.count <= RouteCache.longestPath ? RouteCache.forCurrentThread : nil
        let hash = cache == nil ? 0 : RouteCache.hash(rawPath)
        if let kept = cache?.entry(owner: owner, bytes: rawPath, hash: hash, method: method) { return kept }
        guard let segments = try? PercentDecoding.pathSegments(of: rawPath) else { return nil }
        let entry = RouteCache.Entry(
            owner: owner, bytes: cache == nil ? [] : Array(rawPath), hash: hash, method: method,
            rawPath: String(decoding: rawPath, as: UTF8.self), segments: segments,
            resolution: engine.router.resolve(method: method, segments: segments))
        cache?.keep(entry)
        return entry
    }

    private func dispatch(
        method: String, rawPath: UnsafeBufferPointer<UInt8>, values: PackedValues, body: [UInt8],
        _ connection: EpollConnection, keepAlive: Bool
    ) {
        guard let route = routed(rawPath, method: method) else {
            write(HTTPError.invalidPath.response, keepAlive: keepAlive)
            return
        }
        switch route.resolution {
        case .notFound:
            write(HTTPError.notFound.response, keepAlive: keepAlive)
        case .methodNotAllowed(let allowed):
            write(HTTPError.methodNotAllowed(allowed: allowed).response, keepAlive: keepAlive)
        case .matched(let handler, let parameters):
            let requestValues = RequestValues(packed: values)
            let request = HTTPRequest(
                method: method, rawPath: route.rawPath, pathSegments: route.segments, pathParameters: parameters,
                query: requestValues.query, headers: requestValues.headers, cookies: requestValues.cookies, body: body,
                remoteIP: connection.remoteIP)
            switch handler {
            case .synchronous(let handle):
                let response = (try? handle(request)) ?? HTTPError.internalError.response
                write(response, keepAlive: keepAlive)
            case .asynchronous(let handle):
                let context = waitingContext(connection, keepAlive: keepAlive)
                context.beginWaiting()
                Task {
                    let response = (try? await handle(request)) ?? HTTPError.internalError.response
                    HTTPServer.complete(context, with: response)
                }
            case .deferred(let handle):
                let context = RequestContext(connection: ConnectionHandle(pointer: OpaquePointer(bitPattern: 1)!))
                context.loop = self
                context.beginWaiting(.handling)
                let immediate = (try? handle(request, DeferredResponder(context: context))) ?? nil
                let answer: (HTTPResponse, (any AnyObject & Sendable)?)?? = context.withPhase { phase in
                    if let answer = HTTPServer.takeAnswer(&phase, immediate: immediate) { return answer }
                    phase = .waiting
                    return nil
                }
                if let answer = answer ?? nil {
                    write(answer.0, keepAlive: keepAlive)
                } else {
                    context.epollConnection = connection
                    connection.waiting = context
                    connection.keepAliveOfWaiting = keepAlive
                }
            }
        }
    }

    private func waitingContext(_ connection: EpollConnection, keepAlive: Bool) -> RequestContext {
        let context = RequestContext(connection: ConnectionHandle(pointer: OpaquePointer(bitPattern: 1)!))
        context.loop = self
        context.epollConnection = connection
        connection.waiting = context
        connection.keepAliveOfWaiting = keepAlive
        return context
    }

    private func drainResumed() {
        var drained: UInt64 = 0
        _ = Glibc.read(wake, &drained, 8)
        wakePending.store(false, ordering: .sequentiallyConsistent)
        let contexts = resumed.withLock { list -> [RequestContext] in
            let taken = list
            list.removeAll(keepingCapacity: true)
            return taken
        }
        for context in contexts {
            guard let connection = context.epollConnection else { continue }
            context.epollConnection = nil
            let answer = context.withPhase { phase in HTTPServer.takeAnswer(&phase, immediate: nil) } ?? nil
            guard let (response, _) = answer, connection.waiting === context, !connection.closed else { continue }
            connection.waiting = nil
            output.count = 0
            write(response, keepAlive: connection.keepAliveOfWaiting)
            // Requests that arrived behind it.
            if !connection.pending.isEmpty {
                let bytes = connection.pending
                let used = bytes.withUnsafeBytes { parse($0, connection) }
                connection.pending = used < bytes.count ? Array(bytes[used...]) : []
            }
            send(connection)
            if connection.waiting == nil && connection.readPending && !connection.closed {
                connection.readPending = false
                readable(connection)
            }
        }
    }

    // MARK: - Writing

    private static func reason(_ status: Int) -> StaticString {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Unknown"
        }
    }

    private func refreshDate() {
        var now = time_t()
        time(&now)
        let second = Int(now)
        guard second != dateSecond else { return }
        dateSecond = second
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, 64, "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &parts)
        dateLine = buffer[0..<count].map { UInt8(bitPattern: $0) }
    }

    /// Appends `response` to this loop's output.
    private func write(_ response: HTTPResponse, keepAlive: Bool) {
        guard case .bytes(let body) = response.body else {
            write(HTTPResponse(status: 501, body: .bytes(Array("event streams: not in the prototype".utf8))), keepAlive: false)
            return
        }
        refreshDate()
        output.append("HTTP/1.1 ")
        output.append(decimal: response.status)
        output.append(byte: 0x20)
        output.append(Self.reason(response.status))
        output.append("\r\n")
        dateLine.withUnsafeBytes { if let base = $0.baseAddress { output.append(base, $0.count) } }
        appendFields(response.headers)
        if !keepAlive { output.append("Connection: close\r\n") }
        output.append("Content-Length: ")
        output.append(decimal: body.count)
        output.append("\r\n\r\n")
        body.withUnsafeBytes { if let base = $0.baseAddress { output.append(base, $0.count) } }
    }

    private func appendFields(_ headers: HTTPHeaders) {
        guard let list = headers.fieldList, !list.isEmpty else {
            for field in headers {
                output.append(field.name)
                output.append(": ")
                output.append(field.value)
                output.append("\r\n")
            }
            return
        }
        let address = list.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        for index in renderedFields.indices where renderedFields[index].withUnsafeBufferPointer({ UnsafeRawPointer($0.baseAddress) }) == address {
            renderedBlocks[index].withUnsafeBytes { if let base = $0.baseAddress { output.append(base, $0.count) } }
            return
        }
        let start = output.count
        for field in list {
            output.append(field.name)
            output.append(": ")
            output.append(field.value)
            output.append("\r\n")
        }
        let block = Array(UnsafeRawBufferPointer(rebasing: output.bytes[start...]))
        if renderedFields.count < 4 {
            renderedFields.append(list)
            renderedBlocks.append(block)
        } else {
            renderedFields[nextRendered] = list
            renderedBlocks[nextRendered] = block
            nextRendered = (nextRendered + 1) % 4
        }
    }

    /// Sends this loop's output on `connection` (what the socket does not take waits for EPOLLOUT).
    private func send(_ connection: EpollConnection) {
        guard output.count > 0, !connection.closed else {
            if connection.closeAfterWrite && connection.unsent.isEmpty && connection.waiting == nil { closeConnection(connection) }
            return
        }
        if !connection.unsent.isEmpty {
            connection.unsent.append(contentsOf: output.bytes)
            output.count = 0
            return
        }
        let sent = Glibc.send(connection.descriptor, output.base, output.count, Int32(MSG_NOSIGNAL))
        if sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK {
            closeConnection(connection)
            return
        }
        let taken = max(0, sent)
        if taken < output.count {
            connection.unsent = Array(UnsafeRawBufferPointer(rebasing: output.bytes[taken...]))
            var event = epoll_event()
            event.events = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
            event.data.u64 = UInt64(UInt32(bitPattern: connection.descriptor)) << 8 | 2
            _ = epoll_ctl(epoll, EPOLL_CTL_MOD, connection.descriptor, &event)
        } else if connection.closeAfterWrite {
            closeConnection(connection)
        }
        output.count = 0
    }

    private func flush(_ connection: EpollConnection) {
        guard !connection.unsent.isEmpty else { return }
        let sent = connection.unsent.withUnsafeBytes { Glibc.send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if sent < 0 {
            if errno != EAGAIN && errno != EWOULDBLOCK { closeConnection(connection) }
            return
        }
        connection.unsent.removeFirst(sent)
        if connection.unsent.isEmpty && connection.closeAfterWrite { closeConnection(connection) }
    }
}
