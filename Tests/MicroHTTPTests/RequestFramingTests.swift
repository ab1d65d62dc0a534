import Foundation
import MicroHTTP
import Testing

@testable import MicroHTTP

/// Values packed as the C shim packs them (kind, key length, value length, key, value), all header fields.
private func packedHeaders(_ fields: [(String, String)]) -> PackedValues {
    var bytes: [UInt8] = []
    for (key, value) in fields {
        bytes.append(PackedValues.headerKind)
        withUnsafeBytes(of: UInt32(key.utf8.count)) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(value.utf8.count)) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: key.utf8)
        bytes.append(contentsOf: value.utf8)
    }
    return PackedValues(bytes: bytes)
}

/// `RequestFraming` over packed header fields, without sockets.
@Suite struct RequestFramingReadingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var fields: [(String, String)]
        var expected: Result<RequestFraming, RequestFraming.Problem>
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "no body", fields: [("Host", "x"), ("Accept", "*/*")], expected: .success(.noBody)),
        Case(name: "one Content-Length", fields: [("Host", "x"), ("content-LENGTH", "0042")], expected: .success(.contentLength(42))),
        Case(name: "chunked in any case", fields: [("Transfer-Encoding", "ChUnKeD")], expected: .success(.chunked)),
        Case(
            name: "a Content-Length over UInt64 saturates", fields: [("Content-Length", "18446744073709551616")],
            expected: .success(.contentLength(UInt64.max))),
        Case(name: "two equal Content-Lengths", fields: [("Content-Length", "3"), ("Content-Length", "3")], expected: .failure(.duplicateContentLength)),
        Case(name: "two Content-Lengths, any case", fields: [("Content-Length", "0"), ("CONTENT-LENGTH", "36")], expected: .failure(.duplicateContentLength)),
        Case(name: "negative Content-Length", fields: [("Content-Length", "-1")], expected: .failure(.invalidContentLength)),
        Case(name: "signed Content-Length", fields: [("Content-Length", "+32")], expected: .failure(.invalidContentLength)),
        Case(name: "hexadecimal Content-Length", fields: [("Content-Length", "0x10")], expected: .failure(.invalidContentLength)),
        Case(name: "Content-Length list", fields: [("Content-Length", "3, 3")], expected: .failure(.invalidContentLength)),
        Case(name: "Content-Length with trailing space", fields: [("Content-Length", "3 ")], expected: .failure(.invalidContentLength)),
        Case(name: "empty Content-Length", fields: [("Content-Length", "")], expected: .failure(.invalidContentLength)),
        Case(
            name: "Transfer-Encoding with Content-Length",
            fields: [("Content-Length", "3"), ("Transfer-Encoding", "chunked")], expected: .failure(.contentLengthWithTransferEncoding)),
        Case(name: "gzip, chunked", fields: [("Transfer-Encoding", "gzip, chunked")], expected: .failure(.unsupportedTransferEncoding)),
        Case(name: "identity", fields: [("Transfer-Encoding", "identity")], expected: .failure(.unsupportedTransferEncoding)),
        Case(name: "chunked, chunked", fields: [("Transfer-Encoding", "chunked, chunked")], expected: .failure(.unsupportedTransferEncoding)),
        Case(
            name: "two Transfer-Encoding fields",
            fields: [("Transfer-Encoding", "chunked"), ("transfer-encoding", "chunked")], expected: .failure(.unsupportedTransferEncoding)),
        Case(name: "two Hosts", fields: [("Host", "x"), ("host", "x")], expected: .failure(.duplicateHost)),
        Case(name: "space before a colon", fields: [("Host ", "x")], expected: .failure(.whitespaceBeforeColon)),
        Case(name: "tab before a colon", fields: [("Accept", "*/*"), ("Content-Length\t", "3")], expected: .failure(.whitespaceBeforeColon)),
    ]

    @Test(arguments: cases)
    func framingIsReadOrRefused(_ testCase: Case) {
        let result = RequestFraming.read(packedHeaders(testCase.fields))
        #expect(result == testCase.expected)
    }

    @Test func cookiesAndQueryValuesNamedLikeFramingFieldsAreIgnored() {
        var bytes = packedHeaders([("Host", "x")]).bytes
        for kind: UInt8 in [2, 8] {  // MHD_COOKIE_KIND, MHD_GET_ARGUMENT_KIND
            for (key, value) in [("Content-Length", "1"), ("Content-Length", "2"), ("Host", "y")] {
                bytes.append(kind)
                withUnsafeBytes(of: UInt32(key.utf8.count)) { bytes.append(contentsOf: $0) }
                withUnsafeBytes(of: UInt32(value.utf8.count)) { bytes.append(contentsOf: $0) }
                bytes.append(contentsOf: key.utf8)
                bytes.append(contentsOf: value.utf8)
            }
        }
        #expect(RequestFraming.read(PackedValues(bytes: bytes)) == .success(.noBody))
    }

    @Test func everyProblemRendersAsMalformedRequestNamingIt() throws {
        for problem in RequestFraming.Problem.allCases {
            let response = HTTPError.malformedRequest(problem).response
            #expect(response.status == 400)
            #expect(response.headers["Connection"] == "close")
            guard case .bytes(let body) = response.body else {
                Issue.record("no body")
                continue
            }
            let json = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            let error = try #require(json["error"] as? [String: Any])
            #expect(error["code"] as? String == "malformed_request")
            #expect((error["details"] as? [String: Any])?["problem"] as? String == problem.rawValue)
            #expect((error["message"] as? String)?.isEmpty == false)
        }
    }
}

/// Requests whose framing could smuggle a second request, sent byte for byte to a live server.
@Suite struct RequestSmugglingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: String
        var problem: RequestFraming.Problem
        var testDescription: String { name }
    }

    /// Each is followed, on the same connection, by a second request that must never be answered.
    static let smuggled = "GET /units HTTP/1.1\r\nHost: x\r\n\r\n"

    static let cases: [Case] = [
        Case(
            name: "the issue's two Content-Lengths",
            bytes: "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 36\r\n\r\n",
            problem: .duplicateContentLength),
        Case(
            name: "two equal Content-Lengths",
            bytes: "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
            problem: .duplicateContentLength),
        Case(
            name: "a valid Content-Length then a malformed one",
            bytes: "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: abc\r\n\r\nabc",
            problem: .duplicateContentLength),
        Case(
            name: "Transfer-Encoding with Content-Length",
            bytes: "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            problem: .contentLengthWithTransferEncoding),
        Case(
            name: "a signed Content-Length the library skips beside Transfer-Encoding",
            bytes: "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: +32\r\n\r\n0\r\n\r\n",
            problem: .invalidContentLength),
        Case(
            name: "gzip, chunked", bytes: "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
            problem: .unsupportedTransferEncoding),
        Case(
            name: "identity", bytes: "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n",
            problem: .unsupportedTransferEncoding),
        Case(
            name: "chunked, chunked", bytes: "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n",
            problem: .unsupportedTransferEncoding),
        Case(
            name: "two Transfer-Encoding fields",
            bytes: "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            problem: .unsupportedTransferEncoding),
        Case(name: "two Hosts", bytes: "GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", problem: .duplicateHost),
        Case(name: "space before a colon", bytes: "GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n", problem: .whitespaceBeforeColon),
        Case(name: "tab before a colon", bytes: "GET /healthz HTTP/1.1\r\nHost\t: x\r\n\r\n", problem: .whitespaceBeforeColon),
        Case(
            name: "a Content-Length with a space before its colon",
            bytes: "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length : 36\r\n\r\n", problem: .whitespaceBeforeColon),
    ]

    private static func router(invocations: Counter) -> HTTPRouter {
        var router = HTTPRouter()
        for method in ["GET", "POST"] {
            for path in ["/healthz", "/units"] {
                router.add(method, path, .synchronous { _ in
                    invocations.increment()
                    return .text("ok")
                })
            }
        }
        return router
    }

    @Test(arguments: cases)
    func ambiguousFramingIsRefusedOnceAndTheConnectionClosed(_ testCase: Case) async throws {
        let invocations = Counter()
        try await withServer(router: Self.router(invocations: invocations)) { server in
            let port = server.port
            let (response, closing) = try await blocking { () throws -> (RawResponse, CloseObservation) in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                try connection.send(Array((testCase.bytes + Self.smuggled).utf8))
                let response = try connection.readResponse()
                return (response, connection.waitForClose(timeout: .seconds(3)))
            }
            #expect(response.status == 400)
            #expect(response.header("Connection")?.lowercased() == "close")
            #expect(response.header("Content-Type") == "application/json")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            let error = try #require(json["error"] as? [String: Any])
            #expect(error["code"] as? String == "malformed_request")
            #expect((error["details"] as? [String: Any])?["problem"] as? String == testCase.problem.rawValue)
            #expect(closing.closed, "the connection is closed after the refusal")
            #expect(closing.bytes.isEmpty, "nothing after the one response: \(String(decoding: closing.bytes, as: UTF8.self).prefix(120))")
            #expect(invocations.value == 0, "no handler ran, for the request or the smuggled one")
        }
    }

    @Test func wellFramedRequestsStillShareAKeptAliveConnection() async throws {
        let invocations = Counter()
        try await withServer(router: Self.router(invocations: invocations)) { server in
            let port = server.port
            let statuses = try await blocking { () throws -> [Int] in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                let requests = [
                    "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
                    "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                    "GET /units HTTP/1.1\r\nHost: x\r\n\r\n",
                ]
                return try requests.map { request in
                    try connection.send(request)
                    return try connection.readResponse().status
                }
            }
            #expect(statuses == [200, 200, 200])
            #expect(invocations.value == 3)
        }
    }
}
