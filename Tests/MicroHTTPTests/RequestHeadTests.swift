import Testing

@testable import MicroHTTP

/// The head parser of MicroHTTP's own engine, on bytes given directly (the engine's tests on a socket run the whole
/// suite on it: `MICROHTTP_ENGINE=epoll`).
@Suite struct RequestHeadTests {
    private func read(_ text: String, headerLimit: Int = 8192, maxBodyBytes: Int = 1 << 20) -> RequestHead.Outcome {
        var packing = ByteWriter(capacity: 64)
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { RequestHead.read($0, headerLimit: headerLimit, maxBodyBytes: maxBodyBytes, packing: &packing) }
    }

    private func head(_ text: String) throws -> RequestHead {
        guard case .complete(let head) = read(text) else {
            Issue.record("not a complete head: \(text.debugDescription)")
            throw HTTPError.internalError
        }
        return head
    }

    private func refusal(_ text: String, headerLimit: Int = 8192) -> HTTPError? {
        if case .refused(let error) = read(text, headerLimit: headerLimit) { return error }
        return nil
    }

    private func slice(_ text: String, _ range: Range<Int>) -> String {
        String(decoding: Array(text.utf8)[range], as: UTF8.self)
    }

    @Test func aSimpleGetIsReadWithItsFieldsAndQuery() throws {
        let text = "GET /pages/a%20b?x=1&flag&y=a+b HTTP/1.1\r\nHost: example\r\nX-Two:  spaced value \t\r\n\r\nNEXT"
        let head = try head(text)
        #expect(slice(text, head.method) == "GET")
        #expect(slice(text, head.path) == "/pages/a%20b")
        #expect(head.length == text.utf8.count - 4)
        #expect(!head.isHTTP10 && head.keepAlive && !head.expectsContinue)
        #expect(head.framing == .noBody)
        let values = RequestValues(packed: head.values)
        #expect(values.headers["host"] == "example")
        #expect(values.headers["X-Two"] == "spaced value")
        #expect(values.query == [QueryItem(name: "x", value: "1"), QueryItem(name: "flag", value: nil), QueryItem(name: "y", value: "a b")])
    }

    @Test func anIncompleteHeadWaitsForMoreBytes() {
        for text in ["", "G", "GET / HTTP/1.1", "GET / HTTP/1.1\r\n", "GET / HTTP/1.1\r\nHost: x\r\n", "GET / HTTP/1.1\r\nHost: x\r\n\r"] {
            guard case .incomplete = read(text) else {
                Issue.record("not incomplete: \(text.debugDescription)")
                continue
            }
        }
    }

    /// A TLS ClientHello has no line end: without a look at its first bytes the connection waited for the head's
    /// deadline, unanswered.
    @Test func bytesThatCannotBeginARequestLineAreRefusedBeforeALineEnds() {
        let clientHello = String(decoding: [0x16, 0x03, 0x01, 0x00, 0xF4, 0x01, 0x00, 0x00, 0xF0, 0x03, 0x03], as: UTF8.self)
        for text in [clientHello, "GET\t/", " GET /", "GE(T /", "\r\n\r\n\r\n\r\n\r\nGET /"] {
            #expect(refusal(text)?.code == "malformed_request", "\(text.debugDescription)")
        }
        for text in ["GET", "GET /partial", "\r\nPOST /a HTTP/1.1\r\nHost: x"] {
            guard case .incomplete = read(text) else {
                Issue.record("not incomplete: \(text.debugDescription)")
                continue
            }
        }
    }

    @Test func bareLineFeedsAndLeadingBlankLinesAreAccepted() throws {
        let text = "\r\nGET /a HTTP/1.1\nHost: x\n\n"
        let head = try head(text)
        #expect(slice(text, head.path) == "/a")
        #expect(head.length == text.utf8.count)
    }

    @Test func framingAndConnectionAreRead() throws {
        #expect(try head("POST /a HTTP/1.1\r\nContent-Length: 12\r\n\r\n").framing == .contentLength(12))
        #expect(try head("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").framing == .chunked)
        #expect(try head("GET /a HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n").keepAlive == false)
        #expect(try head("GET /a HTTP/1.0\r\n\r\n").keepAlive == false)
        #expect(try head("GET /a HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keepAlive == true)
        #expect(try head("PUT /a HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n").expectsContinue)
        #expect(try head("PUT /a HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n").expectsContinue == false)
    }

    @Test func anAbsoluteFormTargetIsReadAsItsPath() throws {
        let text = "GET http://example.com:8080/a/b?q=1 HTTP/1.1\r\n\r\n"
        #expect(slice(text, try head(text).path) == "/a/b")
        #expect(refusal("GET http://example.com HTTP/1.1\r\n\r\n")?.code == "malformed_request")
    }

    @Test(arguments: [
        ("GET\r\n\r\n", "invalid_request_line"),
        ("GET /a\r\n\r\n", "invalid_request_line"),
        ("GET /a FOO/1.1\r\n\r\n", "invalid_request_line"),
        ("GET a HTTP/1.1\r\n\r\n", "invalid_request_line"),
        ("GET /a b HTTP/1.1\r\n\r\n", "invalid_request_line"),
        ("GET /a\u{0}b HTTP/1.1\r\n\r\n", "invalid_request_line"),
        ("G(T /a HTTP/1.1\r\n\r\n", "invalid_request_line"),
        ("GET /a HTTP/1.1\r\nNoColon\r\n\r\n", "invalid_field_name"),
        ("GET /a HTTP/1.1\r\n Host: x\r\n\r\n", "invalid_field_name"),
        ("GET /a HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", "obsolete_line_folding"),
        ("GET /a HTTP/1.1\r\nX: a\u{1}b\r\n\r\n", "invalid_field_value"),
        ("GET /a HTTP/1.1\r\nHost : x\r\n\r\n", "whitespace_before_colon"),
        ("POST /a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", "duplicate_content_length"),
        ("POST /a HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n", "invalid_content_length"),
        ("POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "transfer_encoding_in_http_1_0"),
    ])
    func malformedHeadsAreRefusedWithTheirProblem(_ testCase: (String, String)) {
        let error = refusal(testCase.0)
        #expect(error?.status == 400)
        #expect(error?.code == "malformed_request")
        let details = error?.detailsJSON.map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(details.contains("\"\(testCase.1)\""), "\(details)")
    }

    @Test func limitsGiveTheirOwnStatus() {
        #expect(refusal("GET /a HTTP/2.0\r\n\r\n")?.status == 505)
        #expect(refusal("GET /a HTTP/1.1\r\nX: \(String(repeating: "a", count: 5000))\r\n\r\n", headerLimit: 4096)?.status == 431)
        #expect(refusal("GET /a HTTP/1.1\r\nX: \(String(repeating: "a", count: 5000))", headerLimit: 4096)?.status == 431)
        #expect(refusal("GET /\(String(repeating: "a", count: 5000)) HTTP/1.1\r\n\r\n", headerLimit: 4096)?.status == 414)
        #expect(refusal("GET /\(String(repeating: "a", count: 5000))", headerLimit: 4096)?.status == 414)
        // A length past 2^64 reads as the largest, over any limit.
        #expect(refusal("POST /a HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n")?.status == 413)
        if case .refused(let error) = read("POST /a HTTP/1.1\r\nContent-Length: 11\r\n\r\n", maxBodyBytes: 10) {
            #expect(error.status == 413)
        } else {
            Issue.record("a body over the limit was not refused")
        }
    }
}

@Suite struct ChunkedBodyDecoderTests {
    private func decode(_ pieces: [String], limit: Int = 100) -> (ChunkedBodyDecoder.Progress, String) {
        var decoder = ChunkedBodyDecoder(limit: limit)
        var progress = ChunkedBodyDecoder.Progress.needsMore
        for piece in pieces {
            progress = Array(piece.utf8).withUnsafeBytes { decoder.read($0) }
            if progress != .needsMore { break }
        }
        return (progress, String(decoding: decoder.takeBody(), as: UTF8.self))
    }

    @Test func chunksExtensionsAndTrailersAreRead() {
        let (progress, body) = decode(["5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\nNEXT"])
        #expect(progress == .complete(used: 49))
        #expect(body == "hello world")
    }

    @Test func aBodyInPiecesOfOneByteReadsTheSame() {
        let text = "3\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\n"
        let (progress, body) = decode(text.unicodeScalars.map { String($0) })
        #expect(progress == .complete(used: 1))
        #expect(body == "abc0123456789")
    }

    @Test func malformedAndOversizedBodiesAreRefused() {
        #expect(decode(["zz\r\n"]).0 == .malformed)
        #expect(decode(["\r\n"]).0 == .malformed)
        #expect(decode(["3\r\nabcX"]).0 == .malformed)
        #expect(decode(["3\nabc"]).0 == .malformed)
        #expect(decode(["1234567890123456\r\n"], limit: Int.max).0 == .malformed)
        #expect(decode(["65\r\n"], limit: 100).0 == .tooLarge)
        #expect(decode(["32\r\n" + String(repeating: "a", count: 50) + "\r\n33\r\n"], limit: 100).0 == .tooLarge)
    }
}
