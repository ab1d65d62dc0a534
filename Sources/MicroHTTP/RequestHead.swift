internal import CMicroHTTPD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A request's head (request line and header fields) as MicroHTTP's own engine reads it from the bytes received
/// (``EpollEngine``), before any byte of its body.
///
/// The header fields and the query's parameters are packed in the form ``PackedValues`` reads (the C shim's form),
/// so that everything above the engine (``RequestFraming``, ``RequestValues``, ``HTTPHeaders``) is the same for
/// both engines. Ranges are offsets in the bytes parsed.
struct RequestHead {
    /// The method's bytes.
    var method: Range<Int>
    /// The path's bytes: the request target up to its `?`.
    var path: Range<Int>
    /// An HTTP/1.0 request (else HTTP/1.1).
    var isHTTP10: Bool
    /// The head's length, its blank line included: the body starts here.
    var length: Int
    /// The header fields and query parameters.
    var values: PackedValues
    /// How the body is framed.
    var framing: RequestFraming
    /// Whether the connection stays open after the answer (HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with
    /// `Connection: keep-alive`).
    var keepAlive: Bool
    /// `Expect: 100-continue` on an HTTP/1.1 request: the client waits for an interim answer before its body.
    var expectsContinue: Bool

    /// What reading a head from some bytes gave.
    enum Outcome {
        /// The head is not all there yet (and what is there is within the limit).
        case incomplete
        /// A whole head.
        case complete(RequestHead)
        /// A head refused: answered with this error, after which the connection closes.
        case refused(HTTPError)
    }

    /// The header-field kind in a packing (`MHD_HEADER_KIND`).
    static var headerKind: UInt8 { PackedValues.headerKind }
    /// The query-parameter kind in a packing (`MHD_GET_ARGUMENT_KIND`).
    static var queryKind: UInt8 { UInt8(truncatingIfNeeded: MHD_ValueKind.GET_ARGUMENT_KIND.rawValue) }

    /// Reads the head at the start of `bytes`.
    /// - Parameters:
    ///   - bytes: what the connection received from the start of this request.
    ///   - headerLimit: the most bytes a head may have, request line included (431, or 414 for a target alone over
    ///     it).
    ///   - maxBodyBytes: a larger `Content-Length` is refused with 413 before any of the body is read.
    ///   - packing: scratch room for the packed values (its contents are replaced).
    /// - Returns: the outcome.
    static func read(
        _ bytes: UnsafeRawBufferPointer, headerLimit: Int, maxBodyBytes: Int, packing: inout ByteWriter
    ) -> Outcome {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .incomplete }
        let byte = base.assumingMemoryBound(to: UInt8.self)
        // Empty lines before a request line are ignored (RFC 9112, 2.2), a few of them.
        var start = 0
        while start < min(bytes.count, 8) && (byte[start] == 0x0D || byte[start] == 0x0A) { start += 1 }
        guard let length = headLength(byte, from: start, count: bytes.count) else {
            if bytes.count - start > headerLimit { return .refused(oversized(byte, from: start, count: bytes.count, limit: headerLimit)) }
            // Bytes that cannot begin a request line (a TLS handshake, whose first byte is a control byte, has no line
            // end to wait for) are refused now, not at the head's deadline.
            if !beginsLikeARequestLine(byte, from: start, count: bytes.count) { return .refused(.malformedRequest(.invalidRequestLine)) }
            return .incomplete
        }
        if length - start > headerLimit { return .refused(oversized(byte, from: start, count: length, limit: headerLimit)) }

        // The request line: method SP target SP HTTP/1.x
        let lineEnd = lineEnd(byte, from: start, limit: length)
        var index = start
        while index < lineEnd && RequestFraming.isTokenByte(byte[index]) { index += 1 }
        let method = start..<index
        guard !method.isEmpty, index < lineEnd, byte[index] == 0x20 else { return .refused(.malformedRequest(.invalidRequestLine)) }
        index += 1
        let targetStart = index
        // The target ends at the next space; it may hold no other space or control byte.
        index = memchr(base + targetStart, 0x20, lineEnd - targetStart).map { base.distance(to: UnsafeRawPointer($0)) } ?? lineEnd
        if hasControlByte(byte, targetStart..<index, allowingTab: false) { return .refused(.malformedRequest(.invalidRequestLine)) }
        let queryStart = memchr(base + targetStart, 0x3F, index - targetStart).map { base.distance(to: UnsafeRawPointer($0)) } ?? -1
        let target = targetStart..<index
        guard !target.isEmpty, index < lineEnd, byte[index] == 0x20, lineEnd - (index + 1) == 8 else {
            return .refused(.malformedRequest(.invalidRequestLine))
        }
        let version = index + 1
        guard byte[version] == UInt8(ascii: "H"), byte[version + 1] == UInt8(ascii: "T"), byte[version + 2] == UInt8(ascii: "T"),
            byte[version + 3] == UInt8(ascii: "P"), byte[version + 4] == UInt8(ascii: "/"), byte[version + 6] == UInt8(ascii: ".")
        else { return .refused(.malformedRequest(.invalidRequestLine)) }
        guard byte[version + 5] == UInt8(ascii: "1"), byte[version + 7] == UInt8(ascii: "0") || byte[version + 7] == UInt8(ascii: "1") else {
            return .refused(.httpVersionNotSupported)
        }
        let isHTTP10 = byte[version + 7] == UInt8(ascii: "0")
        var path = targetStart..<(queryStart < 0 ? target.upperBound : queryStart)
        if let authorityEnd = absoluteFormPathStart(byte, path) {
            // absolute-form (`http://host/path`), which a server must accept (RFC 9112, 3.2.2): its path alone counts.
            path = authorityEnd..<path.upperBound
        }
        guard path.count > 0, byte[path.lowerBound] == UInt8(ascii: "/") || (path.count == 1 && byte[path.lowerBound] == UInt8(ascii: "*"))
        else { return .refused(.malformedRequest(.invalidRequestLine)) }

        // The header fields, packed as they come.
        packing.count = 0
        var framingReader = RequestFraming.Reader()
        var keepAlive = !isHTTP10
        var expectsContinue = false
        var line = nextLine(byte, after: lineEnd, limit: length)
        while line < length {
            let end = Self.lineEnd(byte, from: line, limit: length)
            if end == line { break }  // the blank line
            // A line beginning with whitespace continues the previous field (obsolete line folding): refused, as
            // RFC 9112, 5.2 allows, since a proxy that unfolds it would read another field than we do.
            // A first field line beginning with whitespace folds into nothing: its name is not a token.
            if byte[line] == 0x20 || byte[line] == 0x09 {
                return .refused(.malformedRequest(packing.count == 0 ? .invalidFieldName : .obsoleteLineFolding))
            }
            guard let colonPointer = memchr(base + line, 0x3A, end - line) else {
                return .refused(.malformedRequest(.invalidFieldName))
            }
            let colon = base.distance(to: UnsafeRawPointer(colonPointer))
            if colon == line { return .refused(.malformedRequest(.invalidFieldName)) }  // `: value`, no name
            var valueStart = colon + 1
            while valueStart < end && (byte[valueStart] == 0x20 || byte[valueStart] == 0x09) { valueStart += 1 }
            var valueEnd = end
            while valueEnd > valueStart && (byte[valueEnd - 1] == 0x20 || byte[valueEnd - 1] == 0x09) { valueEnd -= 1 }
            if hasControlByte(byte, valueStart..<valueEnd, allowingTab: true) { return .refused(.malformedRequest(.invalidFieldValue)) }
            let name = line..<colon
            if let problem = framingReader.field(in: bytes, name: name, value: valueStart..<valueEnd) {
                return .refused(.malformedRequest(problem))
            }
            packing.append(byte: headerKind)
            packing.append(UInt32(name.count))
            packing.append(UInt32(valueEnd - valueStart))
            packing.append(base + name.lowerBound, name.count)
            packing.append(base + valueStart, valueEnd - valueStart)
            if name.count == 10 && spells(byte, name, "connection") {
                let value = valueStart..<valueEnd
                if containsToken(byte, value, "close") { keepAlive = false } else if containsToken(byte, value, "keep-alive") { keepAlive = true }
            } else if name.count == 6 && !isHTTP10 && spells(byte, name, "expect") {
                expectsContinue = spells(byte, valueStart..<valueEnd, "100-continue")
            }
            line = nextLine(byte, after: end, limit: length)
        }
        if queryStart >= 0 { packQuery(byte, queryStart + 1..<target.upperBound, into: &packing) }
        let values = PackedValues(bytes: Array(UnsafeBufferPointer(start: packing.base, count: packing.count)))
        let framing: RequestFraming
        switch framingReader.framing {
        case .failure(let problem):
            return .refused(.malformedRequest(problem))
        case .success(.chunked) where isHTTP10:
            return .refused(.malformedRequest(.transferEncodingInHTTP10))
        case .success(.contentLength(let bodyLength)) where bodyLength > UInt64(max(0, maxBodyBytes)):
            return .refused(.payloadTooLarge(limit: maxBodyBytes))
        case .success(let read):
            framing = read
        }
        return .complete(
            RequestHead(
                method: method, path: path, isHTTP10: isHTTP10, length: length, values: values, framing: framing,
                keepAlive: keepAlive, expectsContinue: expectsContinue))
    }

    /// Whether the bytes at `range` hold a control byte (below 0x20, or 0x7F; a tab allowed when `allowingTab`).
    /// Eight bytes at a time: a word with none, the common case, costs a few instructions; one that may have one
    /// is checked byte by byte.
    private static func hasControlByte(_ byte: UnsafePointer<UInt8>, _ range: Range<Int>, allowingTab: Bool) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var index = range.lowerBound
        while index + 8 <= range.upperBound {
            let word = UnsafeRawPointer(byte + index).loadUnaligned(as: UInt64.self)
            // A byte below 0x20 (of those below 0x80), or one equal to 0x7F, sets its high bit here.
            let below = (word &- ones &* 0x20) & ~word & highs
            let delete = word ^ (ones &* 0x7F)
            let deletes = (delete &- ones) & ~delete & highs
            if below | deletes != 0 {
                for position in index..<index + 8 where isControl(byte[position], allowingTab: allowingTab) { return true }
            }
            index += 8
        }
        while index < range.upperBound {
            if isControl(byte[index], allowingTab: allowingTab) { return true }
            index += 1
        }
        return false
    }

    @inline(__always)
    private static func isControl(_ value: UInt8, allowingTab: Bool) -> Bool {
        (value < 0x20 && !(allowingTab && value == 0x09)) || value == 0x7F
    }

    /// Where the path of an absolute-form target (`http://host/path`, `https://…`) starts; nil for another form.
    private static func absoluteFormPathStart(_ byte: UnsafePointer<UInt8>, _ target: Range<Int>) -> Int? {
        var index = target.lowerBound
        while index < target.upperBound && byte[index] != UInt8(ascii: ":") && byte[index] != UInt8(ascii: "/") { index += 1 }
        let scheme = target.lowerBound..<index
        guard spells(byte, scheme, "http") || spells(byte, scheme, "https"), index + 2 < target.upperBound,
            byte[index] == UInt8(ascii: ":"), byte[index + 1] == UInt8(ascii: "/"), byte[index + 2] == UInt8(ascii: "/")
        else { return nil }
        index += 3
        while index < target.upperBound && byte[index] != UInt8(ascii: "/") { index += 1 }
        return index
    }

    /// The length of the head starting at `from` (through its blank line: CR LF CR LF, or bare LFs), or nil when
    /// it has not all arrived.
    /// Whether the bytes from `from` could still begin a request line: a method (token bytes), then a space, as far
    /// as they go.
    private static func beginsLikeARequestLine(_ byte: UnsafePointer<UInt8>, from: Int, count: Int) -> Bool {
        var index = from
        while index < count && RequestFraming.isTokenByte(byte[index]) { index += 1 }
        return index == count || (index > from && byte[index] == 0x20)
    }

    private static func headLength(_ byte: UnsafePointer<UInt8>, from: Int, count: Int) -> Int? {
        var offset = from
        while offset < count {
            guard let found = memchr(byte + offset, 0x0A, count - offset) else { return nil }
            let newline = UnsafePointer<UInt8>(found.assumingMemoryBound(to: UInt8.self)) - byte
            // A blank line follows: LF LF, or LF CR LF.
            if newline + 1 < count && byte[newline + 1] == 0x0A { return newline + 2 }
            if newline + 2 < count && byte[newline + 1] == 0x0D && byte[newline + 2] == 0x0A { return newline + 3 }
            if newline + 2 >= count { return nil }
            offset = newline + 1
        }
        return nil
    }

    /// The end of the line starting at `from`: the offset of its CR LF (or bare LF).
    private static func lineEnd(_ byte: UnsafePointer<UInt8>, from: Int, limit: Int) -> Int {
        guard from < limit, let found = memchr(byte + from, 0x0A, limit - from) else { return limit }
        let newline = UnsafePointer<UInt8>(found.assumingMemoryBound(to: UInt8.self)) - byte
        return newline > from && byte[newline - 1] == 0x0D ? newline - 1 : newline
    }

    /// The start of the line after the one ending at `end` (at its CR or LF).
    private static func nextLine(_ byte: UnsafePointer<UInt8>, after end: Int, limit: Int) -> Int {
        guard end < limit else { return limit }
        return byte[end] == 0x0D ? end + 2 : end + 1
    }

    /// 414 when the request target alone is over the limit, 431 otherwise.
    private static func oversized(_ byte: UnsafePointer<UInt8>, from: Int, count: Int, limit: Int) -> HTTPError {
        let firstLineEnd = lineEnd(byte, from: from, limit: count)
        var targetStart = from
        while targetStart < firstLineEnd && byte[targetStart] != 0x20 { targetStart += 1 }
        var targetEnd = targetStart + 1
        while targetEnd < firstLineEnd && byte[targetEnd] != 0x20 { targetEnd += 1 }
        return targetEnd - targetStart > limit ? .uriTooLong(limit: limit) : .headerFieldsTooLarge(limit: limit)
    }

    /// Whether the bytes at `range` spell `lowercased`, ignoring ASCII case: ``RequestFraming``'s comparison, on the
    /// parser's pointer.
    @inline(__always)
    private static func spells(_ byte: UnsafePointer<UInt8>, _ range: Range<Int>, _ lowercased: StaticString) -> Bool {
        RequestFraming.bytes(UnsafeRawBufferPointer(start: byte, count: range.upperBound), range, spell: lowercased)
    }

    /// Whether the comma-separated list at `range` holds `lowercased` as one of its elements, ignoring case.
    private static func containsToken(_ byte: UnsafePointer<UInt8>, _ range: Range<Int>, _ lowercased: StaticString) -> Bool {
        var elementStart = range.lowerBound
        while elementStart <= range.upperBound {
            var elementEnd = elementStart
            while elementEnd < range.upperBound && byte[elementEnd] != UInt8(ascii: ",") { elementEnd += 1 }
            var lower = elementStart
            var upper = elementEnd
            while lower < upper && (byte[lower] == 0x20 || byte[lower] == 0x09) { lower += 1 }
            while upper > lower && (byte[upper - 1] == 0x20 || byte[upper - 1] == 0x09) { upper -= 1 }
            if spells(byte, lower..<upper, lowercased) { return true }
            elementStart = elementEnd + 1
        }
        return false
    }

    /// Packs the query's parameters (`a=1&b&c=x+y`): each key with its value (none without `=`), `+` turned into a
    /// space as libmicrohttpd does (percent escapes are left for ``RequestValues`` to decode); empty ones skipped.
    private static func packQuery(_ byte: UnsafePointer<UInt8>, _ query: Range<Int>, into packing: inout ByteWriter) {
        var start = query.lowerBound
        while start < query.upperBound {
            var end = start
            while end < query.upperBound && byte[end] != UInt8(ascii: "&") { end += 1 }
            if end > start {
                var equals = start
                while equals < end && byte[equals] != UInt8(ascii: "=") { equals += 1 }
                packing.append(byte: queryKind)
                packing.append(UInt32(equals - start))
                packing.append(equals < end ? UInt32(end - equals - 1) : UInt32.max)
                for index in start..<equals { packing.append(byte: byte[index] == UInt8(ascii: "+") ? 0x20 : byte[index]) }
                if equals < end {
                    for index in equals + 1..<end { packing.append(byte: byte[index] == UInt8(ascii: "+") ? 0x20 : byte[index]) }
                }
            }
            start = end + 1
        }
    }
}

extension HTTPError {
    /// 505 `http_version_not_supported`: a request line naming an HTTP version other than 1.0 and 1.1; the
    /// connection closes after it.
    static let httpVersionNotSupported = HTTPError(
        status: 505, code: "http_version_not_supported",
        message: "Only HTTP/1.1 and HTTP/1.0 are served here.", headers: ["Connection": "close"])
}
