internal import CMicroHTTPD

extension HTTPServer {
    /// The head MicroHTTP writes for an event stream it serves itself: the status line, the handler's header
    /// fields, `Date`, and `Connection: close`, so that the body is simply everything until the server closes
    /// the connection (no chunked framing, which HTTP/1.1 allows and `EventSource` accepts).
    ///
    /// Fields the server owns (`Connection`, `Content-Length`, `Transfer-Encoding`, `Date`) are left out of the
    /// handler's, as is any field with a CR or LF in it, which the library's `MHD_add_response_header` refuses too.
    /// - Parameter response: the handler's response (its body is the stream).
    /// - Returns: the head's bytes, blank line included.
    static func streamHead(for response: HTTPResponse) -> [UInt8] {
        let status = UInt32(clamping: max(100, min(999, response.status)))
        var head: [UInt8] = []
        head.reserveCapacity(256)
        head.append(contentsOf: "HTTP/1.1 \(status) ".utf8)
        if let reason = MHD_get_reason_phrase_for(status) { head.append(contentsOf: String(cString: reason).utf8) }
        head.append(contentsOf: [13, 10])
        for field in response.headers where isWrittenAsGiven(field) {
            head.append(contentsOf: field.name.utf8)
            head.append(contentsOf: ": ".utf8)
            head.append(contentsOf: field.value.utf8)
            head.append(contentsOf: [13, 10])
        }
        var date = [CChar](repeating: 0, count: 64)
        let dateLength = date.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { mvvmr_http_date($0, buffer.count) } ?? 0
        }
        if dateLength > 0 {
            head.append(contentsOf: "Date: ".utf8)
            head.append(contentsOf: date.prefix(dateLength).map { UInt8(bitPattern: $0) })
            head.append(contentsOf: [13, 10])
        }
        head.append(contentsOf: "Connection: close\r\n\r\n".utf8)
        return head
    }
}

extension HTTPServer {
    /// Whether a handler's header field goes out as given, when MicroHTTP writes a head itself (an event stream's;
    /// every answer of the epoll engine): not a field the server writes itself (`Connection`, `Content-Length`,
    /// `Transfer-Encoding`, `Date`), and without a CR or LF (or a colon in its name), as `MHD_add_response_header`
    /// refuses too.
    static func isWrittenAsGiven(_ field: HTTPHeader) -> Bool {
        let name = field.name.utf8
        guard !name.isEmpty, !name.contains(where: { $0 == 13 || $0 == 10 || $0 == 58 }),
            !field.value.utf8.contains(where: { $0 == 13 || $0 == 10 })
        else { return false }
        switch name.count {
        case 4: return !HTTPHeaders.equalIgnoringASCIICase(field.name, "date")
        case 10: return !HTTPHeaders.equalIgnoringASCIICase(field.name, "connection")
        case 14: return !HTTPHeaders.equalIgnoringASCIICase(field.name, "content-length")
        case 17: return !HTTPHeaders.equalIgnoringASCIICase(field.name, "transfer-encoding")
        default: return true
        }
    }
}

extension HTTPError {
    /// 503 `stream_capacity_reached`: as many event streams as `maxConnections` are open; `details.limit`.
    /// - Parameter limit: the limit.
    /// - Returns: the error.
    static func streamCapacityReached(limit: Int) -> HTTPError {
        limitReached(
            status: 503, code: "stream_capacity_reached",
            message: "The server holds as many event streams as it allows; retry later.",
            limit: limit, headers: ["Retry-After": "5"])
    }

    /// 503 `stream_not_served`: an event stream MicroHTTP's own engine cannot serve on this connection: answers to
    /// earlier requests sent on it are still waiting for the client to take them, or the server's watcher thread
    /// could not start; the connection closes after it.
    static let streamNotServed = HTTPError(
        status: 503, code: "stream_not_served",
        message: "The event stream cannot be served on this connection; open it on a connection of its own.",
        headers: ["Connection": "close", "Retry-After": "1"])

    /// 429 `too_many_streams_from_address`: as many event streams as `maxConnectionsPerIP` are open from the
    /// client's address; `details.limit`.
    /// - Parameter limit: the limit.
    /// - Returns: the error.
    static func tooManyStreamsFromAddress(limit: Int) -> HTTPError {
        limitReached(
            status: 429, code: "too_many_streams_from_address",
            message: "This address holds as many event streams as the server allows one address; close one first.",
            limit: limit, headers: ["Retry-After": "5"])
    }
}
