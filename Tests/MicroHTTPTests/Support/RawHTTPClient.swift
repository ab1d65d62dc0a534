#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What went wrong talking to the server.
enum ClientError: Error, CustomStringConvertible {
    case connectFailed(Int32)
    case timedOut(String)
    case closed(String)
    case malformed(String)
    case socket(String, Int32)

    var description: String {
        switch self {
        case .connectFailed(let code): "connect failed: \(String(cString: strerror(code)))"
        case .timedOut(let what): "timed out: \(what)"
        case .closed(let what): "connection closed: \(what)"
        case .malformed(let what): "malformed response: \(what)"
        case .socket(let what, let code): "\(what): \(String(cString: strerror(code)))"
        }
    }
}

/// A point in time to give up waiting.
struct Deadline {
    let instant: ContinuousClock.Instant

    init(_ duration: Duration) { instant = ContinuousClock.now + duration }

    /// Milliseconds left (at least 0), for `poll`.
    var remainingMilliseconds: Int32 {
        let left = instant - ContinuousClock.now
        if left <= .zero { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
    }

    var hasPassed: Bool { ContinuousClock.now >= instant }
}

/// One parsed HTTP response.
struct RawResponse: Sendable {
    var status: Int
    var reason: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The first value of a header (ignoring case).
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Every value of a header (ignoring case).
    func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

/// The status line and header fields of a response.
struct ResponseHead: Sendable {
    var status: Int
    var reason: String
    var headers: [(name: String, value: String)]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// What a client saw while waiting for the server to close the connection.
struct CloseObservation: Sendable {
    /// The server closed (EOF or reset) before the timeout.
    var closed: Bool
    /// Bytes received meanwhile.
    var bytes: [UInt8]
    /// How long it took.
    var elapsed: Duration
}

/// A raw TCP connection that sends exactly the bytes it is given (URL libraries normalise attack paths away)
/// and parses what comes back. Every wait is bounded by a deadline. Not thread-safe: one thread uses it at a
/// time (it may be handed from one thread to another).
final class RawConnection: @unchecked Sendable {
    // @unchecked Sendable: only ever used by one thread at a time; hand-offs go through thread start or
    // continuation resumption, which order the accesses.
    private(set) var descriptor: Int32
    private var buffer: [UInt8] = []
    /// The peer closed its side (EOF or reset seen).
    private(set) var peerClosed = false

    /// Connects to `host:port` (IPv4 or IPv6 literal).
    init(port: Int, host: String = "127.0.0.1", timeout: Duration = .seconds(10)) throws {
        let isIPv6 = host.contains(":")
        let fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ClientError.socket("socket", errno) }
        // From here on the descriptor is this object's: a throw below still runs `deinit`, which closes it, so
        // the error paths close through `close()` (which forgets the number) and never twice.
        descriptor = fd
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var result: Int32
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            _ = inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            _ = inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        if result != 0 {
            let code = errno
            guard code == EINPROGRESS else {
                close()
                throw ClientError.connectFailed(code)
            }
            var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&entry, 1, Deadline(timeout).remainingMilliseconds)
            guard ready == 1 else {
                close()
                throw ClientError.timedOut("connect")
            }
            var socketError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &socketError, &length)
            if socketError != 0 {
                close()
                throw ClientError.connectFailed(socketError)
            }
        }
    }

    deinit { close() }

    /// Closes the socket (idempotent).
    func close() {
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
        }
    }

    /// Closes with a reset (SO_LINGER 0) rather than a FIN.
    func reset() {
        guard descriptor >= 0 else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    // MARK: Sending

    func send(_ text: String, timeout: Duration = .seconds(10)) throws {
        try send(Array(text.utf8), timeout: timeout)
    }

    /// Sends every byte, waiting (bounded) while the socket is full.
    func send(_ bytes: [UInt8], timeout: Duration = .seconds(10)) throws {
        let deadline = Deadline(timeout)
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                Glibc.send(descriptor, raw.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                offset += count
                continue
            }
            let code = errno
            if count < 0 && (code == EAGAIN || code == EWOULDBLOCK) {
                try waitFor(Int16(POLLOUT), deadline: deadline, what: "send")
                continue
            }
            if count < 0 && code == EINTR { continue }
            throw ClientError.socket("send", code)
        }
    }

    /// Sends `bytes` in pieces and stops early, without an error, once the server answers or closes.
    /// Returns how many bytes were sent.
    @discardableResult
    func sendUntilAnswered(_ bytes: [UInt8], pieceSize: Int = 4096, timeout: Duration = .seconds(10)) -> Int {
        var offset = 0
        let deadline = Deadline(timeout)
        while offset < bytes.count && !deadline.hasPassed {
            let end = min(bytes.count, offset + pieceSize)
            do {
                try send(Array(bytes[offset..<end]), timeout: .milliseconds(500))
            } catch {
                return offset
            }
            offset = end
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&entry, 1, 5) > 0 { return offset }
        }
        return offset
    }

    /// Whether something (bytes, EOF or a reset) is waiting to be read, without waiting.
    func hasDataOrEOF() -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0
    }

    // MARK: Receiving

    private func waitFor(_ events: Int16, deadline: Deadline, what: String) throws {
        while true {
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&entry, 1, deadline.remainingMilliseconds)
            if ready > 0 { return }
            if ready < 0 && errno == EINTR { continue }
            throw ClientError.timedOut(what)
        }
    }

    /// Reads whatever arrives next into the buffer. Returns false at EOF (or reset).
    private func fill(deadline: Deadline, what: String) throws -> Bool {
        if peerClosed { return false }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[..<count])
                return true
            }
            if count == 0 {
                peerClosed = true
                return false
            }
            let code = errno
            if code == EAGAIN || code == EWOULDBLOCK {
                try waitFor(Int16(POLLIN), deadline: deadline, what: what)
                continue
            }
            if code == EINTR { continue }
            if code == ECONNRESET || code == EPIPE {
                peerClosed = true
                return false
            }
            throw ClientError.socket("recv", code)
        }
    }

    private func take(_ count: Int) -> [UInt8] {
        let taken = Array(buffer[..<count])
        buffer.removeFirst(count)
        return taken
    }

    /// Reads up to and including the next CRLF; returns the line without it.
    private func readLine(deadline: Deadline, what: String) throws -> [UInt8] {
        while true {
            if let index = Self.find([13, 10], in: buffer) {
                let line = take(index)
                buffer.removeFirst(2)
                return line
            }
            guard try fill(deadline: deadline, what: what) else { throw ClientError.closed(what) }
        }
    }

    private func readExactly(_ count: Int, deadline: Deadline, what: String) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill(deadline: deadline, what: what) else { throw ClientError.closed(what) }
        }
        return take(count)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int = 0) -> Int? {
        guard haystack.count >= needle.count + start else { return nil }
        var index = start
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0] && Array(haystack[index..<index + needle.count]) == needle { return index }
            index += 1
        }
        return nil
    }

    /// Reads a status line and header fields (skipping any `100 Continue` when asked).
    func readHead(timeout: Duration = .seconds(10), skipContinue: Bool = true) throws -> ResponseHead {
        let deadline = Deadline(timeout)
        while true {
            let statusLine = String(decoding: try readLine(deadline: deadline, what: "status line"), as: UTF8.self)
            let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
                throw ClientError.malformed("status line '\(statusLine)'")
            }
            var headers: [(name: String, value: String)] = []
            while true {
                let line = String(decoding: try readLine(deadline: deadline, what: "header"), as: UTF8.self)
                if line.isEmpty { break }
                guard let colon = line.firstIndex(of: ":") else { throw ClientError.malformed("header '\(line)'") }
                let name = String(line[..<colon])
                let value = String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" })
                headers.append((name, value))
            }
            if skipContinue && status == 100 { continue }
            return ResponseHead(status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers)
        }
    }

    /// Reads the next chunk of a chunked body; `nil` after the last (zero-size) chunk and its trailer.
    func readChunk(timeout: Duration = .seconds(10)) throws -> [UInt8]? {
        let deadline = Deadline(timeout)
        let sizeLine = String(decoding: try readLine(deadline: deadline, what: "chunk size"), as: UTF8.self)
        let sizeText = sizeLine.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard let size = Int(sizeText.trimmingCharacters(), radix: 16) else {
            throw ClientError.malformed("chunk size '\(sizeLine)'")
        }
        if size == 0 {
            while try !readLine(deadline: deadline, what: "trailer").isEmpty {}
            return nil
        }
        let data = try readExactly(size, deadline: deadline, what: "chunk data")
        guard try readLine(deadline: deadline, what: "chunk end").isEmpty else { throw ClientError.malformed("chunk end") }
        return data
    }

    /// Reads the next bytes of a body that ends when the server closes the connection (no length, not chunked);
    /// `nil` once it has closed it.
    func readUntilClose(timeout: Duration = .seconds(10)) throws -> [UInt8]? {
        if buffer.isEmpty {
            guard try fill(deadline: Deadline(timeout), what: "body until close") else { return nil }
        }
        return take(buffer.count)
    }

    /// Reads a whole response. `method` is the request's method (a `HEAD` response has no body).
    func readResponse(method: String = "GET", timeout: Duration = .seconds(10)) throws -> RawResponse {
        let deadline = Deadline(timeout)
        let head = try readHead(timeout: timeout)
        var body: [UInt8] = []
        let noBody = method == "HEAD" || head.status == 204 || head.status == 304 || (100..<200).contains(head.status)
        if noBody {
            // nothing
        } else if head.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            while let chunk = try readChunk(timeout: .milliseconds(Int64(max(1, deadline.remainingMilliseconds)))) {
                body.append(contentsOf: chunk)
            }
        } else if let lengthText = head.header("Content-Length"), let length = Int(lengthText) {
            body = try readExactly(length, deadline: deadline, what: "body")
        } else {
            while try fill(deadline: deadline, what: "body until close") {}
            body = buffer
            buffer = []
        }
        return RawResponse(status: head.status, reason: head.reason, headers: head.headers, body: body)
    }

    /// Waits until the server closes the connection (or `timeout` passes), collecting what arrives.
    func waitForClose(timeout: Duration = .seconds(3)) -> CloseObservation {
        let start = ContinuousClock.now
        let deadline = Deadline(timeout)
        var received = buffer
        buffer = []
        while true {
            do {
                if try fill(deadline: deadline, what: "close") {
                    received.append(contentsOf: buffer)
                    buffer = []
                } else {
                    return CloseObservation(closed: true, bytes: received, elapsed: ContinuousClock.now - start)
                }
            } catch {
                return CloseObservation(closed: false, bytes: received, elapsed: ContinuousClock.now - start)
            }
        }
    }

    /// Bytes already received and not yet parsed (after a response, stray bytes would show up here).
    func bufferedBytes(waiting: Duration) -> [UInt8] {
        _ = try? fill(deadline: Deadline(waiting), what: "stray bytes")
        return buffer
    }

    // MARK: Requests

    /// Builds a request's bytes.
    static func requestBytes(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil, keepAlive: Bool = false
    ) -> [UInt8] {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.count)\r\n" }
        if !keepAlive { text += "Connection: close\r\n" }
        text += "\r\n"
        return Array(text.utf8) + (body ?? [])
    }

    /// Sends one request and reads its response.
    func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil, keepAlive: Bool = true,
        timeout: Duration = .seconds(10)
    ) throws -> RawResponse {
        try send(Self.requestBytes(method, target, headers: headers, body: body, keepAlive: keepAlive), timeout: timeout)
        return try readResponse(method: method, timeout: timeout)
    }
}

/// One-shot helpers: connect, send, read, close.
enum RawHTTP {
    /// Sends `bytes` exactly and reads one response.
    static func exchange(port: Int, bytes: [UInt8], method: String = "GET", timeout: Duration = .seconds(10)) throws -> RawResponse {
        let connection = try RawConnection(port: port)
        defer { connection.close() }
        try connection.send(bytes, timeout: timeout)
        return try connection.readResponse(method: method, timeout: timeout)
    }

    /// Sends a simple request (with `Connection: close`) and reads the response.
    static func request(
        port: Int, _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        host: String = "127.0.0.1", timeout: Duration = .seconds(10)
    ) throws -> RawResponse {
        let connection = try RawConnection(port: port, host: host)
        defer { connection.close() }
        try connection.send(RawConnection.requestBytes(method, target, headers: headers, body: body), timeout: timeout)
        return try connection.readResponse(method: method, timeout: timeout)
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
