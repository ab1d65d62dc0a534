import Foundation
import MicroHTTP
import Testing

// One server per test, over real sockets, through the raw client.

@Suite struct ServerStartTests {
    @Test func portZeroBindsAFreePortThatCanBeRead() async throws {
        var router = HTTPRouter()
        router.get("/ping") { _ in .text("pong") }
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        let server = HTTPServer(configuration: configuration, router: router)
        #expect(server.port == 0)
        try server.start()
        let port = server.port
        #expect(port > 0 && port <= 65535)
        let response = try await blocking { try RawHTTP.request(port: port, "GET", "/ping") }
        #expect(response.status == 200)
        #expect(response.text == "pong")
        await blocking { server.stop(gracePeriod: .milliseconds(100)) }
    }

    @Test func startingTwiceThrowsAlreadyStarted() async throws {
        try await withServer(router: HTTPRouter()) { server in
            #expect(throws: HTTPServerError(code: "already_started", message: "The server was already started.")) {
                try server.start()
            }
        }
    }

    @Test(arguments: ["not-a-host", "example.com", "1.2.3", "::g", "[::1"])
    func anUnparsableHostThrowsInvalidHost(host: String) throws {
        var configuration = HTTPServerConfiguration()
        configuration.host = host
        configuration.port = 0
        let server = HTTPServer(configuration: configuration, router: HTTPRouter())
        let error = try #require(throws: HTTPServerError.self) { try server.start() }
        #expect(error.code == "invalid_host")
        #expect(server.port == 0)
    }

    @Test func aPortOutOfRangeThrowsInvalidPort() throws {
        var configuration = HTTPServerConfiguration()
        configuration.port = 70_000
        let server = HTTPServer(configuration: configuration, router: HTTPRouter())
        let error = try #require(throws: HTTPServerError.self) { try server.start() }
        #expect(error.code == "invalid_port")
    }

    @Test func aPortInUseThrowsStartFailed() async throws {
        try await withServer(router: HTTPRouter()) { first in
            var configuration = HTTPServerConfiguration()
            configuration.port = first.port
            let second = HTTPServer(configuration: configuration, router: HTTPRouter())
            let error = try #require(throws: HTTPServerError.self) { try second.start() }
            #expect(error.code == "start_failed")
        }
    }

    @Test func listensOnIPv6LoopbackAndSeesTheIPv6Peer() async throws {
        let seen = Box<String?>(nil)
        var router = HTTPRouter()
        router.get("/who") { request in
            seen.value = request.remoteAddress
            return .text(request.remoteAddress)
        }
        try await withServer(router: router, configure: { $0.host = "::1" }) { server in
            let port = server.port
            let response = try await blocking { try RawHTTP.request(port: port, "GET", "/who", host: "::1") }
            #expect(response.status == 200)
            #expect(seen.value == "::1")
        }
    }
}

@Suite struct RoutingTests {
    /// Routes that record the request they received.
    private static func recordingRouter(_ seen: Box<HTTPRequest?>) -> HTTPRouter {
        var router = HTTPRouter()
        router.get("/users/{name}/files/{file}") { request in
            seen.value = request
            return .text("\(request.pathParameters["name"] ?? "-")|\(request.pathParameters["file"] ?? "-")")
        }
        router.get("/echo") { request in
            seen.value = request
            return .text("ok")
        }
        router.post("/items") { _ in .text("created", status: 201) }
        router.get("/items") { _ in .text("list") }
        router.get("/teapot") { _ in
            throw HTTPError(status: 418, code: "teapot", message: "I am a \"teapot\".", headers: ["X-Brew": "no"])
        }
        router.get("/crash") { _ in throw SecretError(detail: "password=hunter2 at /etc/shadow") }
        return router
    }

    struct SecretError: Error { var detail: String }

    @Test func pathParametersArriveDecodedWithAnEncodedSlashKeptInsideItsSegment() async throws {
        let seen = Box<HTTPRequest?>(nil)
        try await withServer(router: Self.recordingRouter(seen)) { server in
            let port = server.port
            let response = try await blocking { try RawHTTP.request(port: port, "GET", "/users/a%20b/files/x%2Fy%2e.txt") }
            #expect(response.status == 200)
            #expect(response.text == "a b|x/y..txt")
            let request = try #require(seen.value)
            #expect(request.pathParameters == ["name": "a b", "file": "x/y..txt"])
            #expect(request.pathSegments == ["users", "a b", "files", "x/y..txt"])
            #expect(request.rawPath == "/users/a%20b/files/x%2Fy%2e.txt")
            #expect(request.method == "GET")
        }
    }

    /// Requests on one connection are served by one library thread, so a path seen before is routed from that
    /// thread's route cache: the same path with another method, or another path, must not take its route.
    @Test func aPathRoutedAgainOnTheSameThreadTakesItsOwnRouteAndValues() async throws {
        let seen = Box<HTTPRequest?>(nil)
        try await withServer(router: Self.recordingRouter(seen)) { server in
            let port = server.port
            // A path longer than the cache keeps is routed every time, with the same answer.
            let long = String(repeating: "n", count: 256)
            let answers = try await blocking { () throws -> [(Int, String)] in
                let connection = try RawConnection(port: port)
                var answers: [(Int, String)] = []
                for (method, target) in [
                    ("GET", "/users/a/files/b"), ("GET", "/users/c/files/d"), ("GET", "/users/a/files/b"),
                    ("POST", "/items"), ("GET", "/items"), ("POST", "/items"), ("DELETE", "/items"),
                    ("GET", "/users/a%20b/files/x"), ("GET", "/users/a%20b/files/x"), ("GET", "/nowhere"),
                    ("GET", "/users/\(long)/files/z"), ("GET", "/users/\(long)/files/z"), ("GET", "/users/a/files/b"),
                ] {
                    let response = try connection.request(method, target)
                    answers.append((response.status, response.status < 300 ? response.text : ""))
                }
                return answers
            }
            #expect(answers.map(\.0) == [200, 200, 200, 201, 200, 201, 405, 200, 200, 404, 200, 200, 200])
            #expect(
                answers.map(\.1) == [
                    "a|b", "c|d", "a|b", "created", "list", "created", "", "a b|x", "a b|x", "", "\(long)|z", "\(long)|z",
                    "a|b",
                ])
            let request = try #require(seen.value)
            #expect(request.pathSegments == ["users", "a", "files", "b"])
            #expect(request.rawPath == "/users/a/files/b")
        }
    }

    @Test func queryParametersAreDecodedWithPlusAsASpace() async throws {
        let seen = Box<HTTPRequest?>(nil)
        try await withServer(router: Self.recordingRouter(seen)) { server in
            let port = server.port
            let response = try await blocking {
                try RawHTTP.request(port: port, "GET", "/echo?a=1+2&b=x%26y&c=%E2%82%AC&plus=%2B&flag&bad=%zz&a=second")
            }
            #expect(response.status == 200)
            let request = try #require(seen.value)
            #expect(request.rawPath == "/echo")
            #expect(request.queryValue("a") == "1 2")
            #expect(request.queryValue("b") == "x&y")
            #expect(request.queryValue("c") == "€")
            #expect(request.queryValue("plus") == "+")
            #expect(request.query.contains(QueryItem(name: "flag", value: nil)))
            #expect(request.query.filter { $0.name == "a" }.map(\.value) == ["1 2", "second"])
            // An undecodable parameter is dropped, not passed on half-decoded.
            #expect(!request.query.contains { $0.name == "bad" })
        }
    }

    @Test func headersCookiesAndPeerAddressReachTheHandler() async throws {
        let seen = Box<HTTPRequest?>(nil)
        try await withServer(router: Self.recordingRouter(seen)) { server in
            let port = server.port
            let response = try await blocking {
                try RawHTTP.request(
                    port: port, "GET", "/echo",
                    headers: [
                        ("X-Custom-Header", "Value One"), ("x-multi", "1"), ("X-Multi", "2"),
                        ("Cookie", "session=abc123; theme=dark"),
                    ])
            }
            #expect(response.status == 200)
            let request = try #require(seen.value)
            #expect(request.headers["x-custom-header"] == "Value One")
            #expect(request.headers["X-CUSTOM-HEADER"] == "Value One")
            #expect(request.headers.values(for: "X-Multi") == ["1", "2"])
            #expect(request.headers["Host"] == "127.0.0.1")
            #expect(request.cookies == ["session": "abc123", "theme": "dark"])
            #expect(request.remoteAddress == "127.0.0.1")
            #expect(request.remoteIP.bytes == [127, 0, 0, 1])
        }
    }

    @Test func unknownPathIs404WithAJSONError() async throws {
        try await withServer(router: Self.recordingRouter(Box(nil))) { server in
            let port = server.port
            let response = try await blocking { try RawHTTP.request(port: port, "GET", "/nothing/here") }
            #expect(response.status == 404)
            #expect(response.header("Content-Type") == "application/json")
            let error = try #require(try jsonObject(response.body)["error"] as? [String: Any])
            #expect(error["code"] as? String == "not_found")
            #expect(error["message"] is String)
        }
    }

    @Test func knownPathWithAnotherMethodIs405WithAllow() async throws {
        try await withServer(router: Self.recordingRouter(Box(nil))) { server in
            let port = server.port
            let response = try await blocking { try RawHTTP.request(port: port, "DELETE", "/items") }
            #expect(response.status == 405)
            #expect(response.header("Allow") == "POST, GET, HEAD")
            #expect(errorCode(response) == "method_not_allowed")
            let error = try #require(try jsonObject(response.body)["error"] as? [String: Any])
            #expect((error["details"] as? [String: Any])?["allowed"] as? [String] == ["POST", "GET", "HEAD"])
        }
    }

    @Test func headOnAGetRouteSendsTheHeadersWithoutTheBody() async throws {
        try await withServer(router: Self.recordingRouter(Box(nil))) { server in
            let port = server.port
            let (head, next, stray) = try await blocking { () throws -> (RawResponse, RawResponse, [UInt8]) in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                let head = try connection.request("HEAD", "/items")
                // A body sent after the HEAD answer would be read as the start of the next response.
                let next = try connection.request("GET", "/items", keepAlive: false)
                return (head, next, connection.bufferedBytes(waiting: .milliseconds(50)))
            }
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "4")
            #expect(head.header("Content-Type") == "text/plain; charset=utf-8")
            #expect(head.body.isEmpty)
            #expect(next.status == 200)
            #expect(next.text == "list")
            #expect(stray.isEmpty)
        }
    }

    @Test func aThrownHTTPErrorBecomesExactlyThatResponse() async throws {
        try await withServer(router: Self.recordingRouter(Box(nil))) { server in
            let port = server.port
            let response = try await blocking { try RawHTTP.request(port: port, "GET", "/teapot") }
            #expect(response.status == 418)
            #expect(response.header("X-Brew") == "no")
            let error = try #require(try jsonObject(response.body)["error"] as? [String: Any])
            #expect(error["code"] as? String == "teapot")
            #expect(error["message"] as? String == "I am a \"teapot\".")
        }
    }

    @Test func anyOtherThrownErrorIs500WithNothingLeaked() async throws {
        try await withServer(router: Self.recordingRouter(Box(nil))) { server in
            let port = server.port
            let response = try await blocking { try RawHTTP.request(port: port, "GET", "/crash") }
            #expect(response.status == 500)
            #expect(errorCode(response) == "internal_error")
            #expect(!response.text.contains("hunter2"))
            #expect(!response.text.contains("shadow"))
            #expect(!response.text.contains("SecretError"))
            #expect(!response.headers.contains { $0.value.contains("hunter2") })
        }
    }

    @Test func keepAliveAnswersSeveralRequestsOnOneConnection() async throws {
        try await withServer(router: Self.recordingRouter(Box(nil))) { server in
            let port = server.port
            let responses = try await blocking { () throws -> [RawResponse] in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                var responses: [RawResponse] = []
                for index in 0..<3 {
                    responses.append(try connection.request("GET", "/users/u\(index)/files/f"))
                }
                responses.append(try connection.request("POST", "/items", body: Array("x".utf8)))
                return responses
            }
            #expect(responses.map(\.status) == [200, 200, 200, 201])
            #expect(responses.map(\.text) == ["u0|f", "u1|f", "u2|f", "created"])
            #expect(responses.allSatisfy { $0.header("Connection")?.lowercased() != "close" })
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await withServer(router: Self.recordingRouter(Box(nil))) { server in
            let port = server.port
            let texts = try await blocking { () throws -> [String] in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                try connection.send(
                    RawConnection.requestBytes("GET", "/users/a/files/1", keepAlive: true)
                        + RawConnection.requestBytes("GET", "/users/b/files/2", keepAlive: true))
                return [try connection.readResponse().text, try connection.readResponse().text]
            }
            #expect(texts == ["a|1", "b|2"])
        }
    }
}

@Suite struct RequestBodyTests {
    private static func uploadRouter(invocations: Counter) -> HTTPRouter {
        var router = HTTPRouter()
        router.post("/upload") { request in
            invocations.increment()
            var response = HTTPResponse(status: 200, headers: ["Content-Type": "application/octet-stream"], body: .bytes(request.body))
            response.headers["X-Checksum"] = String(fnv1a(request.body), radix: 16)
            response.headers["X-Length"] = String(request.body.count)
            return response
        }
        return router
    }

    @Test func aOneMebibyteBodyArrivesIntact() async throws {
        let invocations = Counter()
        let body = await blocking { () -> [UInt8] in
            var generator = SystemRandomNumberGenerator()
            var body: [UInt8] = []
            body.reserveCapacity(1 << 20)
            for _ in 0..<((1 << 20) / 8) {
                withUnsafeBytes(of: generator.next() as UInt64) { body.append(contentsOf: $0) }
            }
            return body
        }
        #expect(body.count == 1_048_576)
        let checksum = await blocking { fnv1a(body) }
        try await withServer(router: Self.uploadRouter(invocations: invocations), configure: { $0.maxBodyBytes = 1 << 20 }) { server in
            let port = server.port
            let (response, echoedIntact) = try await blocking { () throws -> (RawResponse, Bool) in
                let response = try RawHTTP.request(port: port, "POST", "/upload", body: body, timeout: .seconds(20))
                return (response, response.body == body)
            }
            #expect(response.status == 200)
            #expect(response.header("X-Length") == "1048576")
            #expect(response.header("X-Checksum") == String(checksum, radix: 16))
            #expect(response.body.count == body.count)
            #expect(echoedIntact)
            #expect(invocations.value == 1)
        }
    }

    @Test(arguments: [false, true])
    func aBodyExactlyAtTheLimitIsAccepted(chunked: Bool) async throws {
        let invocations = Counter()
        let body = [UInt8](repeating: 0x61, count: 1000)
        try await withServer(router: Self.uploadRouter(invocations: invocations), configure: { $0.maxBodyBytes = 1000 }) { server in
            let port = server.port
            let response = try await blocking { () throws -> RawResponse in
                if !chunked { return try RawHTTP.request(port: port, "POST", "/upload", body: body) }
                let head = "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                let chunks = "1f4\r\n\(String(repeating: "a", count: 500))\r\n1f4\r\n\(String(repeating: "a", count: 500))\r\n0\r\n\r\n"
                return try RawHTTP.exchange(port: port, bytes: Array((head + chunks).utf8), method: "POST")
            }
            #expect(response.status == 200)
            #expect(response.header("X-Length") == "1000")
            #expect(invocations.value == 1)
        }
    }

    @Test func overLimitBodyIsRefusedBeforeItIsRead() async throws {
        let invocations = Counter()
        try await withServer(router: Self.uploadRouter(invocations: invocations), configure: { $0.maxBodyBytes = 1024 }) { server in
            let port = server.port
            let (response, closing) = try await blocking { () throws -> (RawResponse, CloseObservation) in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                // Headers only: not one byte of the 2 MiB body is sent.
                try connection.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2097152\r\n\r\n")
                let response = try connection.readResponse(method: "POST")
                return (response, connection.waitForClose(timeout: .seconds(3)))
            }
            #expect(response.status == 413)
            #expect(response.header("Connection")?.lowercased() == "close")
            let error = try #require(try jsonObject(response.body)["error"] as? [String: Any])
            #expect(error["code"] as? String == "payload_too_large")
            #expect((error["details"] as? [String: Any])?["limit"] as? Int == 1024)
            #expect(closing.closed)
            #expect(closing.bytes.isEmpty)
            #expect(invocations.value == 0)
        }
    }

    @Test func overLimitBodyWithExpectContinueGetsNoContinue() async throws {
        let invocations = Counter()
        try await withServer(router: Self.uploadRouter(invocations: invocations), configure: { $0.maxBodyBytes = 1024 }) { server in
            let port = server.port
            let head = try await blocking { () throws -> ResponseHead in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                try connection.send("POST /upload HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4096\r\n\r\n")
                return try connection.readHead(skipContinue: false)
            }
            #expect(head.status == 413)
            #expect(invocations.value == 0)
        }
    }

    @Test func chunkedBodyGrowingOverTheLimitIs413AndNeverReachesTheHandler() async throws {
        let invocations = Counter()
        try await withServer(router: Self.uploadRouter(invocations: invocations), configure: { $0.maxBodyBytes = 1024 }) { server in
            let port = server.port
            let response = try await blocking { () throws -> RawResponse in
                var text = "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                for _ in 0..<8 { text += "200\r\n\(String(repeating: "z", count: 512))\r\n" }
                text += "0\r\n\r\n"
                return try RawHTTP.exchange(port: port, bytes: Array(text.utf8), method: "POST")
            }
            #expect(response.status == 413)
            #expect(errorCode(response) == "payload_too_large")
            #expect(invocations.value == 0)
        }
    }

    @Test func endlessChunkedBodyIsCutOffAndNeverReachesTheHandler() async throws {
        let invocations = Counter()
        try await withServer(router: Self.uploadRouter(invocations: invocations), configure: { $0.maxBodyBytes = 1024 }) { server in
            let port = server.port
            let (sent, closing) = try await blocking { () throws -> (Int, CloseObservation) in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                try connection.send("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
                let chunk = Array("1000\r\n\(String(repeating: "z", count: 4096))\r\n".utf8)
                // Up to 8 MiB of chunks, never the last one: the server must give up long before.
                var sent = 0
                for _ in 0..<2048 {
                    guard (try? connection.send(chunk, timeout: .seconds(2))) != nil else { break }
                    sent += chunk.count
                    if connection.hasDataOrEOF() { break }
                }
                return (sent, connection.waitForClose(timeout: .seconds(5)))
            }
            #expect(closing.closed)
            #expect(sent < 2048 * 4102)
            let text = String(decoding: closing.bytes, as: UTF8.self)
            #expect(closing.bytes.isEmpty || text.hasPrefix("HTTP/1.1 413"))
            #expect(invocations.value == 0)
        }
    }
}

/// What libmicrohttpd itself answers, before MicroHTTP sees the request. These bodies are the library's,
/// not MicroHTTP's JSON: docs/HTTP.md documents them.
@Suite struct LibraryAnswerTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        /// `nil`: the library closes the connection without answering.
        var status: Int?
        var bodyContains: String
        var testDescription: String { name }
    }

    static let libraryHTMLHeaderTooBig =
        "<html><head><title>Request too big</title></head><body>Your HTTP header was too big for the memory constraints of this webserver.</body></html>"
    static let libraryHTMLMalformed =
        "<html><head><title>Request malformed</title></head><body>Your HTTP request was syntactically incorrect.</body></html>"

    static let cases: [Case] = [
        Case(
            name: "64 KiB header field", bytes: Array("GET /ok HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 65536))\r\n\r\n".utf8),
            status: 431, bodyContains: libraryHTMLHeaderTooBig),
        Case(
            name: "many header fields over the limit",
            bytes: Array(("GET /ok HTTP/1.1\r\nHost: x\r\n" + (0..<2000).map { "X-H\($0): 0123456789abcdef\r\n" }.joined() + "\r\n").utf8),
            status: 431, bodyContains: libraryHTMLHeaderTooBig),
        Case(
            name: "64 KiB request line", bytes: Array("GET /\(String(repeating: "a", count: 65536)) HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
            status: 414, bodyContains: libraryHTMLHeaderTooBig),
        Case(name: "request line without a version", bytes: Array("GET /ok\r\n\r\n".utf8), status: 400, bodyContains: libraryHTMLMalformed),
        Case(name: "unknown protocol", bytes: Array("GET /ok FOO/1.1\r\nHost: x\r\n\r\n".utf8), status: 400, bodyContains: libraryHTMLMalformed),
        Case(
            name: "header line without a colon", bytes: Array("GET /ok HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n".utf8), status: 400,
            bodyContains: libraryHTMLMalformed),
        Case(
            name: "unsupported HTTP version", bytes: Array("GET /ok HTTP/9.9\r\nHost: x\r\n\r\n".utf8), status: 505,
            bodyContains: "<html><head><title>Requested HTTP version is not supported</title></head><body>Requested HTTP version is not supported.</body></html>"),
        Case(
            name: "non-numeric Content-Length", bytes: Array("POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n".utf8),
            status: 400, bodyContains: "wrong value for <b>Content-Length</b> header"),
        Case(
            name: "malformed chunk size", bytes: Array("POST /ok HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8),
            status: 400, bodyContains: "Your HTTP chunked encoding was syntactically incorrect."),
        Case(name: "a single word", bytes: Array("GARBAGE\r\n\r\n".utf8), status: nil, bodyContains: ""),
        Case(name: "a method alone", bytes: Array("GET\r\n\r\n".utf8), status: nil, bodyContains: ""),
        Case(name: "TLS handshake bytes", bytes: [0x16, 0x03, 0x01, 0x00, 0x10, 13, 10, 13, 10], status: nil, bodyContains: ""),
    ]

    @Test(arguments: cases)
    func libraryAnswersMalformedOrOversizedRequestsItselfAndCloses(_ testCase: Case) async throws {
        let invocations = Counter()
        var router = HTTPRouter()
        router.get("/ok") { _ in
            invocations.increment()
            return .text("ok")
        }
        router.post("/ok") { _ in
            invocations.increment()
            return .text("ok")
        }
        try await withServer(router: router, configure: { $0.maxHeaderBytes = 16 * 1024 }) { server in
            let port = server.port
            let closing = try await blocking { () throws -> CloseObservation in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                connection.sendUntilAnswered(testCase.bytes)
                return connection.waitForClose(timeout: .seconds(3))
            }
            #expect(closing.closed, "the library closes the connection")
            let text = String(decoding: closing.bytes, as: UTF8.self)
            if testEngine == .epoll {
                // MicroHTTP's own engine answers each of these itself, as JSON (400 where the library says nothing).
                #expect(text.hasPrefix("HTTP/1.1 \(testCase.status ?? 400) "), "\(text.prefix(80))")
                #expect(text.contains("\r\nConnection: close\r\n"))
                #expect(text.contains("\r\nContent-Type: application/json\r\n"))
                #expect(text.contains(#"{"error":{"code":""#))
            } else if let status = testCase.status {
                #expect(text.hasPrefix("HTTP/1.1 \(status) "), "\(text.prefix(80))")
                #expect(text.contains("\r\nConnection: close\r\n"))
                // The library's own answers carry no Content-Type.
                let head = text.components(separatedBy: "\r\n\r\n").first ?? ""
                #expect(!head.lowercased().contains("content-type"))
                #expect(text.contains(testCase.bodyContains))
            } else {
                #expect(closing.bytes.isEmpty, "\(text.prefix(80))")
            }
            #expect(invocations.value == 0)
        }
    }

    @Test func headersJustUnderTheLimitAreAccepted() async throws {
        var router = HTTPRouter()
        router.get("/ok") { request in .text(String(request.headers["X-Big"]?.count ?? 0)) }
        try await withServer(router: router, configure: { $0.maxHeaderBytes = 16 * 1024 }) { server in
            let port = server.port
            let response = try await blocking {
                try RawHTTP.request(port: port, "GET", "/ok", headers: [("X-Big", String(repeating: "b", count: 8 * 1024))])
            }
            #expect(response.status == 200)
            #expect(response.text == "8192")
        }
    }
}
