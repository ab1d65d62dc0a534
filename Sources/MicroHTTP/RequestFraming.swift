/// How a request says its body is delimited, read from its header fields before any of the body is read,
/// or why those fields cannot be trusted.
///
/// A request whose length two parties could read differently (two `Content-Length`s, `Content-Length`
/// beside `Transfer-Encoding`, a coding the server does not apply, a name with whitespace before its
/// colon that one reader trims and another does not) is how a second request is smuggled inside the
/// first one's body. MicroHTTP refuses such a request outright (400 `malformed_request`, then closes the
/// connection) instead of choosing one reading.
///
/// The fields are checked as libmicrohttpd received them: `MHD_get_connection_values_n` lists every field,
/// duplicates included, and a name keeps any whitespace sent before its colon (`Host : x` arrives as
/// `Host `), so nothing the library merged or trimmed hides a problem.
enum RequestFraming: Equatable, Sendable {
    /// Neither `Content-Length` nor `Transfer-Encoding`: the request has no body.
    case noBody
    /// One plain decimal `Content-Length` (saturated at `UInt64.max`: larger numbers are over any limit).
    case contentLength(UInt64)
    /// `Transfer-Encoding: chunked`, alone.
    case chunked

    /// Why a request's framing is refused. Each has a stable snake_case code (sent as `details.problem`).
    enum Problem: String, Error, Equatable, Sendable, CaseIterable {
        case duplicateContentLength = "duplicate_content_length"
        case invalidContentLength = "invalid_content_length"
        case contentLengthWithTransferEncoding = "content_length_with_transfer_encoding"
        case unsupportedTransferEncoding = "unsupported_transfer_encoding"
        case duplicateHost = "duplicate_host"
        case whitespaceBeforeColon = "whitespace_before_colon"
        case invalidFieldName = "invalid_field_name"
        case transferEncodingInHTTP10 = "transfer_encoding_in_http_1_0"
        case invalidRequestLine = "invalid_request_line"
        case obsoleteLineFolding = "obsolete_line_folding"
        case invalidFieldValue = "invalid_field_value"
        case invalidChunkedBody = "invalid_chunked_body"

        /// A sentence naming the problem, for the error's `message`.
        var message: String {
            switch self {
            case .duplicateContentLength: "The request has more than one Content-Length header field."
            case .invalidContentLength: "The Content-Length header field is not a plain decimal number."
            case .contentLengthWithTransferEncoding: "The request has both Transfer-Encoding and Content-Length."
            case .unsupportedTransferEncoding: "The only Transfer-Encoding accepted is a single 'chunked'."
            case .duplicateHost: "The request has more than one Host header field."
            case .whitespaceBeforeColon: "A header field name is followed by whitespace before its colon."
            case .invalidFieldName: "A header field name holds a character that is not allowed in a name."
            case .transferEncodingInHTTP10: "An HTTP/1.0 request cannot carry a Transfer-Encoding."
            case .invalidRequestLine: "The request line is not 'method target HTTP/1.x'."
            case .obsoleteLineFolding: "A header field line begins with whitespace (obsolete line folding)."
            case .invalidFieldValue: "A header field value holds a control character."
            case .invalidChunkedBody: "The chunked body is not framed as RFC 9112 says."
            }
        }
    }

    /// Reads the framing from a request's packed values (entries of other kinds are skipped), in one pass.
    /// - Parameter values: the values as the C shim packed them.
    /// - Returns: the framing, or the first problem found.
    static func read(_ values: PackedValues) -> Result<RequestFraming, Problem> {
        values.bytes.withUnsafeBytes { raw in
            var reader = Reader()
            var offset = 0
            while let (entry, next) = PackedValues.entry(at: offset, in: raw) {
                offset = next
                guard entry.kind == PackedValues.headerKind else { continue }
                if let problem = reader.field(in: raw, name: entry.key, value: entry.value) { return .failure(problem) }
            }
            return reader.framing
        }
    }

    /// Reads a request's framing one header field at a time, as the fields are parsed (MicroHTTP's own engine) or
    /// from a packing (``read(_:)``).
    struct Reader {
        private var hostCount = 0
        private var contentLengthCount = 0
        private var contentLength: UInt64 = 0
        private var contentLengthIsDecimal = true
        private var transferEncodingCount = 0
        private var transferEncodingIsChunked = false

        /// A reader that has seen no field.
        init() {}

        /// Reads the field whose name and value are at `name` and `value` in `raw`.
        /// - Returns: a problem this field shows alone (the others show once every field was read: ``framing``).
        @inline(__always)
        mutating func field(in raw: UnsafeRawBufferPointer, name: Range<Int>, value: Range<Int>?) -> Problem? {
            guard let last = name.last else { return nil }
            // The library ends a name at its colon and keeps whatever else the line began with: a first field
            // line that begins with whitespace (` Transfer-Encoding: chunked`) arrives with it in the name, which
            // a proxy may have read as another field, or as none. A name is a token (RFC 9110, 5.1), or refused.
            if raw[last] == 0x20 || raw[last] == 0x09 { return .whitespaceBeforeColon }
            for index in name where !RequestFraming.isTokenByte(raw[index]) { return .invalidFieldName }
            switch name.count {
            case 4 where RequestFraming.bytes(raw, name, spell: "host"):
                hostCount += 1
            case 14 where RequestFraming.bytes(raw, name, spell: "content-length"):
                contentLengthCount += 1
                let value = value ?? 0..<0
                contentLengthIsDecimal = contentLengthIsDecimal && !value.isEmpty
                for index in value {
                    let digit = raw[index] &- 0x30
                    guard digit <= 9 else {
                        contentLengthIsDecimal = false
                        break
                    }
                    let (times10, overflowA) = contentLength.multipliedReportingOverflow(by: 10)
                    let (sum, overflowB) = times10.addingReportingOverflow(UInt64(digit))
                    contentLength = overflowA || overflowB ? UInt64.max : sum
                }
            case 17 where RequestFraming.bytes(raw, name, spell: "transfer-encoding"):
                transferEncodingCount += 1
                transferEncodingIsChunked = value.map { RequestFraming.bytes(raw, $0, spell: "chunked") } ?? false
            default:
                break
            }
            return nil
        }

        /// The framing of the fields read, or the first problem they show together.
        var framing: Result<RequestFraming, Problem> {
            if contentLengthCount > 1 { return .failure(.duplicateContentLength) }
            if contentLengthCount == 1 && !contentLengthIsDecimal { return .failure(.invalidContentLength) }
            if transferEncodingCount > 0 && contentLengthCount > 0 {
                return .failure(.contentLengthWithTransferEncoding)
            }
            if transferEncodingCount > 1 || (transferEncodingCount == 1 && !transferEncodingIsChunked) {
                return .failure(.unsupportedTransferEncoding)
            }
            if hostCount > 1 { return .failure(.duplicateHost) }
            if transferEncodingCount == 1 { return .success(.chunked) }
            if contentLengthCount == 1 { return .success(.contentLength(contentLength)) }
            return .success(.noBody)
        }
    }

    /// Whether a byte may stand in a header field name: RFC 9110's `tchar` (digits, letters and
    /// ``!#$%&'*+-.^_`|~``), read from two 64-bit masks of the bytes below 128 instead of a chain of comparisons.
    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        let belowSixtyFour: UInt64 = 0x03FF_6CFA_0000_0000
        let belowOneTwentyEight: UInt64 = 0x57FF_FFFF_C7FF_FFFE
        switch byte {
        case 0..<64: return (belowSixtyFour >> UInt64(byte)) & 1 == 1
        case 64..<128: return (belowOneTwentyEight >> UInt64(byte &- 64)) & 1 == 1
        default: return false
        }
    }

    /// Whether the bytes at `range` spell `lowercased` ignoring ASCII case (only letters are folded).
    static func bytes(_ raw: UnsafeRawBufferPointer, _ range: Range<Int>, spell lowercased: StaticString)
        -> Bool
    {
        guard range.count == lowercased.utf8CodeUnitCount else { return false }
        return lowercased.withUTF8Buffer { expected in
            var offset = 0
            for index in range {
                let byte = raw[index]
                let folded = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                if folded != expected[offset] { return false }
                offset += 1
            }
            return true
        }
    }
}

extension HTTPError {
    /// 400 `malformed_request`: the request's framing cannot be trusted (see ``RequestFraming``);
    /// `details.problem` names the problem; the connection closes after it.
    /// - Parameter problem: what is wrong.
    /// - Returns: the error.
    static func malformedRequest(_ problem: RequestFraming.Problem) -> HTTPError {
        HTTPError(
            status: 400,
            code: "malformed_request",
            message: problem.message,
            detailsJSON: Array(#"{"problem":"\#(problem.rawValue)"}"#.utf8),
            headers: ["Connection": "close"]
        )
    }
}
