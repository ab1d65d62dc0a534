import Foundation
import Testing

@testable import MicroHTTP

// Tests of MicroHTTP's parts without sockets.

@Suite struct RouterResolutionTests {
    private static func text(_ value: String) -> RouteHandler {
        .synchronous { _ in .text(value) }
    }

    /// Runs a matched handler and returns its text body.
    private static func answer(_ resolution: HTTPRouter.Resolution) throws -> (text: String, parameters: PathParameters)? {
        guard case .matched(let handler, let parameters) = resolution, case .synchronous(let handle) = handler else { return nil }
        let response = try handle(HTTPRequest(method: "GET", path: "/"))
        guard case .bytes(let bytes) = response.body else { return nil }
        return (String(decoding: bytes, as: UTF8.self), parameters)
    }

    @Test func placeholdersCaptureWholeDecodedSegments() throws {
        var router = HTTPRouter()
        router.add("GET", "/users/{id}/files/{file}", Self.text("files"))
        let result = try #require(try Self.answer(router.resolve(method: "GET", segments: ["users", "a b", "files", "x/y.txt"])))
        #expect(result.text == "files")
        #expect(result.parameters == ["id": "a b", "file": "x/y.txt"])
    }

    @Test func literalSegmentsMustMatchExactlyAndSegmentCountsMustAgree() {
        var router = HTTPRouter()
        router.add("GET", "/api/items", Self.text("items"))
        guard case .notFound = router.resolve(method: "GET", segments: ["api", "Items"]) else {
            Issue.record("case differs, yet matched")
            return
        }
        guard case .notFound = router.resolve(method: "GET", segments: ["api", "items", "extra"]) else {
            Issue.record("longer path matched")
            return
        }
        guard case .notFound = router.resolve(method: "GET", segments: ["api"]) else {
            Issue.record("shorter path matched")
            return
        }
    }

    @Test func firstRegisteredMatchingRouteWins() throws {
        var router = HTTPRouter()
        router.add("GET", "/users/me", Self.text("me"))
        router.add("GET", "/users/{id}", Self.text("by id"))
        #expect(try Self.answer(router.resolve(method: "GET", segments: ["users", "me"]))?.text == "me")
        #expect(try Self.answer(router.resolve(method: "GET", segments: ["users", "7"]))?.text == "by id")
    }

    @Test func patternsIgnoreEmptySegmentsAndMethodsAreUppercased() throws {
        var router = HTTPRouter()
        router.add("put", "//things//{name}/", Self.text("put"))
        let result = try #require(try Self.answer(router.resolve(method: "PUT", segments: ["things", "x"])))
        #expect(result.parameters == ["name": "x"])
    }

    @Test func otherMethodOnAKnownPathListsTheAllowedMethodsWithHeadAfterGet() {
        var router = HTTPRouter()
        router.add("GET", "/items", Self.text("list"))
        router.add("POST", "/items", Self.text("create"))
        router.add("POST", "/items", Self.text("duplicate"))
        router.add("DELETE", "/items/{id}", Self.text("delete"))
        guard case .methodNotAllowed(let allowed) = router.resolve(method: "DELETE", segments: ["items"]) else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed == ["GET", "HEAD", "POST"])
        guard case .methodNotAllowed(let allowedForItem) = router.resolve(method: "GET", segments: ["items", "3"]) else {
            Issue.record("expected 405")
            return
        }
        #expect(allowedForItem == ["DELETE"])
    }

    @Test func headIsAnsweredByTheGetRoute() throws {
        var router = HTTPRouter()
        router.add("GET", "/page/{name}", Self.text("page"))
        let result = try #require(try Self.answer(router.resolve(method: "HEAD", segments: ["page", "home"])))
        #expect(result.text == "page")
        #expect(result.parameters == ["name": "home"])
    }

    @Test func fallbackAnswersOnlyGetAndHeadForUnmatchedPaths() throws {
        var router = HTTPRouter()
        router.add("POST", "/form", Self.text("form"))
        router.fallback = Self.text("fallback")
        #expect(try Self.answer(router.resolve(method: "GET", segments: ["anything", "else"]))?.text == "fallback")
        #expect(try Self.answer(router.resolve(method: "HEAD", segments: []))?.text == "fallback")
        guard case .notFound = router.resolve(method: "POST", segments: ["anything"]) else {
            Issue.record("fallback answered a POST")
            return
        }
        // A known path with another method is still 405, not the fallback.
        guard case .methodNotAllowed(let allowed) = router.resolve(method: "GET", segments: ["form"]) else {
            Issue.record("expected 405 despite the fallback")
            return
        }
        #expect(allowed == ["POST"])
    }
}

@Suite struct HeaderListTests {
    @Test func lookupIgnoresASCIICase() {
        let headers: HTTPHeaders = ["Content-Type": "application/json", "X-Request-ID": "abc"]
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers["x-request-id"] == "abc")
        #expect(headers["Content-Typ"] == nil)
        #expect(headers["Content-Typf"] == nil)
    }

    @Test func fieldsKeepTheirOrderAndRepeatedFieldsAllStay() {
        var headers = HTTPHeaders()
        headers.add(name: "Set-Cookie", value: "a=1")
        headers.add(name: "X-Other", value: "o")
        headers.add(name: "set-cookie", value: "b=2")
        #expect(headers.count == 3)
        #expect(headers.map(\.name) == ["Set-Cookie", "X-Other", "set-cookie"])
        #expect(headers.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(headers["Set-Cookie"] == "a=1")
    }

    @Test func settingReplacesEveryFieldOfThatNameAndNilRemovesThem() {
        var headers: HTTPHeaders = ["Accept": "a", "X": "1", "accept": "b"]
        headers["ACCEPT"] = "c"
        #expect(headers.values(for: "accept") == ["c"])
        #expect(headers.map(\.name) == ["X", "ACCEPT"])
        headers["accept"] = nil
        #expect(headers.count == 1)
        #expect(headers["Accept"] == nil)
    }


    @Test func headersReadFromTheLibrarysPackingSkipCookiesAndQueryValues() {
        let cookie: UInt8 = 2
        let query: UInt8 = 8
        let headers = HTTPHeaders(
            packed: packedValues([
                (PackedValues.headerKind, "Host", "example.org"), (cookie, "session", "abc"), (query, "flag", nil),
                (PackedValues.headerKind, "X-Multi", "1"), (PackedValues.headerKind, "x-multi", "2"),
                (PackedValues.headerKind, "X-Empty", ""),
            ]))
        #expect(headers.count == 4)
        #expect(headers["HOST"] == "example.org")
        #expect(headers["session"] == nil)
        #expect(headers["flag"] == nil)
        #expect(headers["x-empty"] == "")
        #expect(headers.values(for: "X-MULTI") == ["1", "2"])
        #expect(headers.map(\.name) == ["Host", "X-Multi", "x-multi", "X-Empty"])
        #expect(headers == ["Host": "example.org", "X-Multi": "1", "x-multi": "2", "X-Empty": ""])
        #expect(headers.hashValue == HTTPHeaders(headers.fields).hashValue)
    }

    @Test func changingHeadersReadFromTheLibraryKeepsTheOtherFields() {
        var headers = HTTPHeaders(
            packed: packedValues([(PackedValues.headerKind, "Host", "h"), (PackedValues.headerKind, "Accept", "a")]))
        headers["accept"] = "b"
        headers.add(name: "X-New", value: "n")
        #expect(headers.fields == [HTTPHeader(name: "Host", value: "h"), HTTPHeader(name: "accept", value: "b"), HTTPHeader(name: "X-New", value: "n")])
    }

    @Test func aTruncatedPackingYieldsItsWholeValuesOnly() {
        let whole = packedValues([(PackedValues.headerKind, "A", "1"), (PackedValues.headerKind, "B", "2")])
        for cut in 0..<whole.bytes.count {
            let headers = HTTPHeaders(packed: PackedValues(bytes: Array(whole.bytes.prefix(cut))))
            let expected = cut >= 11 ? ["A"] : []
            #expect(headers.map(\.name) == expected, "cut at \(cut)")
        }
        #expect(HTTPHeaders(packed: whole).map(\.name) == ["A", "B"])
    }
}

@Suite struct PathParameterTests {
    @Test func valuesAreFoundByNameInTheirSegments() {
        var router = HTTPRouter()
        router.add("GET", "/users/{id}/files/{file}", .synchronous { _ in .text("") })
        guard case .matched(_, let parameters) = router.resolve(method: "GET", segments: ["users", "7", "files", "a.txt"]) else {
            Issue.record("no match")
            return
        }
        #expect(parameters["id"] == "7")
        #expect(parameters["file"] == "a.txt")
        #expect(parameters["users"] == nil)
        #expect(parameters.count == 2)
        #expect(parameters.dictionary == ["id": "7", "file": "a.txt"])
        #expect(parameters == ["file": "a.txt", "id": "7"])
        #expect(parameters != ["file": "a.txt", "id": "8"])
    }

    @Test func aRouteWithoutPlaceholdersHasNone() {
        var router = HTTPRouter()
        router.add("GET", "/api/units", .synchronous { _ in .text("") })
        guard case .matched(_, let parameters) = router.resolve(method: "GET", segments: ["api", "units"]) else {
            Issue.record("no match")
            return
        }
        #expect(parameters.isEmpty)
        #expect(parameters["api"] == nil)
        #expect(parameters == PathParameters())
    }
}

@Suite struct ErrorResponseTests {
    private static func parse(_ response: HTTPResponse) throws -> [String: Any] {
        guard case .bytes(let bytes) = response.body else { throw ClientError.malformed("not bytes") }
        let object = try JSONSerialization.jsonObject(with: Data(bytes))
        return try #require(object as? [String: Any])
    }

    @Test(arguments: [
        "plain",
        #"quotes " and \ backslashes"#,
        "new\nlines\r\nand\ttabs",
        "control \u{01}\u{08}\u{0C}\u{1F} characters",
        "unicode é ✓ 🚀",
        "",
    ])
    func errorBodyIsValidJSONWhateverTheMessage(message: String) throws {
        let error = HTTPError(status: 422, code: "bad \"code\"\n", message: message)
        let response = error.response
        #expect(response.status == 422)
        #expect(response.headers["Content-Type"] == "application/json")
        let object = try Self.parse(response)
        let body = try #require(object["error"] as? [String: Any])
        #expect(body["code"] as? String == "bad \"code\"\n")
        #expect(body["message"] as? String == message)
        #expect(body["details"] == nil)
    }

    @Test func detailsAndHeadersAreIncluded() throws {
        let error = HTTPError(
            status: 429, code: "slow_down", message: "later", detailsJSON: Array(#"{"retry":[1,2]}"#.utf8),
            headers: ["Retry-After": "2"])
        let response = error.response
        #expect(response.headers["retry-after"] == "2")
        let body = try #require(try Self.parse(response)["error"] as? [String: Any])
        let details = try #require(body["details"] as? [String: Any])
        #expect(details["retry"] as? [Int] == [1, 2])
    }

    @Test func methodNotAllowedListsMethodsInBodyAndAllowHeader() throws {
        let response = HTTPError.methodNotAllowed(allowed: ["GET", "HEAD", "POST"]).response
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, HEAD, POST")
        let body = try #require(try Self.parse(response)["error"] as? [String: Any])
        #expect(body["code"] as? String == "method_not_allowed")
        let details = try #require(body["details"] as? [String: Any])
        #expect(details["allowed"] as? [String] == ["GET", "HEAD", "POST"])
    }

    @Test func builtInErrorsHaveTheirStatusesAndCodes() throws {
        let cases: [(HTTPError, Int, String)] = [
            (.notFound, 404, "not_found"),
            (.invalidPath, 400, "invalid_path"),
            (.internalError, 500, "internal_error"),
            (.draining, 503, "draining"),
            (.payloadTooLarge(limit: 10), 413, "payload_too_large"),
        ]
        for (error, status, code) in cases {
            let response = error.response
            #expect(response.status == status)
            let body = try #require(try Self.parse(response)["error"] as? [String: Any])
            #expect(body["code"] as? String == code)
        }
        #expect(HTTPError.draining.response.headers["Retry-After"] == "1")
        #expect(HTTPError.payloadTooLarge(limit: 10).response.headers["Connection"] == "close")
    }
}

@Suite struct MediaTypeTests {
    @Test(arguments: [
        ("index.html", "text/html; charset=utf-8"),
        ("/deep/page.HTM", "text/html; charset=utf-8"),
        ("app.js", "text/javascript; charset=utf-8"),
        ("module.mjs", "text/javascript; charset=utf-8"),
        ("style.css", "text/css; charset=utf-8"),
        ("data.json", "application/json"),
        ("app.js.map", "application/json"),
        ("logo.SVG", "image/svg+xml"),
        ("photo.jpeg", "image/jpeg"),
        ("font.woff2", "font/woff2"),
        ("site.webmanifest", "application/manifest+json"),
        ("module.wasm", "application/wasm"),
        ("notes.txt", "text/plain; charset=utf-8"),
        ("README", "application/octet-stream"),
        ("archive.tar.gz", "application/octet-stream"),
        ("dir.v2/file", "application/octet-stream"),
        ("trailing.", "application/octet-stream"),
    ])
    func contentTypeComesFromTheExtension(path: String, expected: String) {
        #expect(MediaTypes.contentType(forPath: path) == expected)
    }
}

@Suite struct IPAddressTests {
    @Test(arguments: ["127.0.0.1", "0.0.0.0", "255.255.255.255", "10.1.2.3", "::1", "::", "2001:db8::1", "fe80::1:2:3:4", "::ffff:10.0.0.1"])
    func textAndBytesRoundTrip(text: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.description == text)
        #expect(address.byteCount == (text.contains(":") ? 16 : 4))
        #expect(IPAddress(bytes: address.bytes) == address)
        #expect(IPAddress(bytes: address.bytes).description == text)
    }

    @Test func everyIPv4OctetIsWrittenInDecimal() {
        // Each octet's value in each position, so every digit count is written in each place.
        for octet in 0...255 {
            let address = IPAddress(bytes: [UInt8(octet), 7, UInt8(255 - octet), UInt8(octet)])
            #expect(address.description == "\(octet).7.\(255 - octet).\(octet)")
        }
        let small = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: IPAddress.maximumTextCount - 1)
        defer { small.deallocate() }
        #expect(IPAddress(bytes: [1, 2, 3, 4]).writeText(into: small) == 0)
    }

    @Test func bytesAreInNetworkOrder() throws {
        #expect(try #require(IPAddress("10.1.2.3")).bytes == [10, 1, 2, 3])
        #expect(try #require(IPAddress("::1")).bytes == Array(repeating: 0, count: 15) + [1])
        #expect(IPAddress(bytes: [192, 168, 0, 1]).description == "192.168.0.1")
    }

    @Test(arguments: ["", "1.2.3", "256.1.1.1", "::g", "localhost", "1.2.3.4 ", "[::1]"])
    func invalidTextIsRejected(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func otherByteCountsAreUnknown() {
        #expect(IPAddress(bytes: [1, 2, 3]) == .unknown)
        #expect(IPAddress(bytes: [UInt8](repeating: 1, count: 5)).description == "")
        #expect(IPAddress.unknown.bytes.isEmpty)
        #expect(HTTPRequest(method: "GET", path: "/", remoteAddress: "not an ip").remoteAddress == "")
        #expect(HTTPRequest(method: "GET", path: "/", remoteAddress: "::1").remoteAddress == "::1")
    }
}

@Suite struct EventStreamFramingTests {
    /// Everything the stream would hand the library, read without a connection.
    private static func drain(_ stream: EventStream) -> String {
        var bytes: [UInt8] = []
        var buffer = [CChar](repeating: 0, count: 7)  // small, so reads cross frame boundaries
        while true {
            let count = buffer.withUnsafeMutableBufferPointer { stream.read(into: $0.baseAddress!, capacity: $0.count) }
            if count <= 0 { break }
            bytes.append(contentsOf: buffer[..<count].map { UInt8(bitPattern: $0) })
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test(arguments: [
        (nil, nil, "hello", "data: hello\n\n"),
        ("patch", "17", #"{"rev":3}"#, "id: 17\nevent: patch\ndata: {\"rev\":3}\n\n"),
        (nil, nil, "a\nb\r\nc", "data: a\ndata: b\ndata: c\n\n"),
        (nil, nil, "", "data: \n\n"),
        (nil, nil, "ends\n", "data: ends\ndata: \n\n"),
        ("x\ndata: injected", "1\r\n2", "d", "id: 12\nevent: xdata: injected\ndata: d\n\n"),
    ] as [(String?, String?, String, String)])
    func sendFramesEventsLineByLine(event: String?, id: String?, data: String, expected: String) {
        let stream = EventStream()
        #expect(stream.send(event: event, id: id, data: data))
        #expect(Self.drain(stream) == expected)
    }

    @Test func commentsAndRawBytesKeepTheirOrder() {
        let stream = EventStream()
        stream.send(data: "one")
        stream.sendComment("ping\nnot a field")
        stream.send(bytes: Array("data: raw\n\n".utf8))
        #expect(Self.drain(stream) == "data: one\n\n: pingnot a field\n\ndata: raw\n\n")
    }

    @Test func overflowingTheBufferClosesTheStreamAndReportsIt() {
        let stream = EventStream(bufferLimit: 32)
        let reasons = Box<[EventStream.Termination]>([])
        stream.onTermination { reason in reasons.update { $0.append(reason) } }
        #expect(stream.send(data: "0123456789"))  // 18 bytes
        #expect(!stream.send(data: "0123456789"))  // 36 > 32
        #expect(stream.isClosed)
        #expect(!stream.send(data: "x"))
        #expect(Self.drain(stream) == "")  // what was pending is dropped
        stream.finish()
        #expect(reasons.value == [.bufferOverflow])
        // Registered after the end: runs at once with the same reason.
        stream.onTermination { reason in reasons.update { $0.append(reason) } }
        #expect(reasons.value == [.bufferOverflow, .bufferOverflow])
    }

    @Test func closeSendsWhatIsPendingThenEnds() {
        let stream = EventStream()
        let reasons = Box<[EventStream.Termination]>([])
        stream.onTermination { reason in reasons.update { $0.append(reason) } }
        stream.send(data: "last")
        stream.close()
        #expect(!stream.send(data: "too late"))
        #expect(Self.drain(stream) == "data: last\n\n")
        stream.finish()
        #expect(reasons.value == [.closedByServer])
    }

    @Test func aStreamNeverAttachedEndsAsNeverStarted() {
        let stream = EventStream()
        let reasons = Box<[EventStream.Termination]>([])
        stream.onTermination { reason in reasons.update { $0.append(reason) } }
        stream.finish()
        #expect(reasons.value == [.neverStarted])
    }
}

@Suite struct PercentDecodingTests {
    @Test func segmentsAreDecodedOneByOneAndEmptyOnesDropped() throws {
        #expect(try PercentDecoding.pathSegments(of: Array("/a%2Fb/c%20d//e/".utf8)) == ["a/b", "c d", "e"])
        #expect(try PercentDecoding.pathSegments(of: Array("/".utf8)) == [])
        #expect(try PercentDecoding.pathSegments(of: Array("/%e2%82%AC/%2e%2e".utf8)) == ["€", ".."])
        #expect(try PercentDecoding.pathSegments(of: Array("/a+b".utf8)) == ["a+b"])
        #expect(try PercentDecoding.pathSegments(of: Array("/caf".utf8) + [0xC3, 0xA9]) == ["café"])
    }

    @Test(arguments: ["/%", "/%2", "/%zz", "/%00", "/a%00b", "/%c0%ae%c0%ae", "/%e0%80%ae", "/%ff", "/%ed%a0%80"])
    func malformedEscapesInvalidUTF8AndNULAreRejected(path: String) {
        #expect(throws: PercentDecoding.Failure.self) { try PercentDecoding.pathSegments(of: Array(path.utf8)) }
    }

    @Test func rawInvalidUTF8AndRawNULAreRejected() {
        #expect(throws: PercentDecoding.Failure.self) { try PercentDecoding.pathSegments(of: [47, 0xC0, 0xAE]) }
        #expect(throws: PercentDecoding.Failure.self) { try PercentDecoding.pathSegments(of: [47, 97, 0, 98]) }
    }

    @Test func plusIsASpaceOnlyWhenAsked() throws {
        #expect(try PercentDecoding.decode(Array("a+b%2B".utf8)[...], plusIsSpace: true) == "a b+")
        #expect(try PercentDecoding.decode(Array("a+b%2B".utf8)[...], plusIsSpace: false) == "a+b+")
    }
}

@Suite struct RouteCacheTests {
    private static func entry(
        _ path: String, method: String = "GET", owner: UInt64, hash: UInt64? = nil
    ) -> RouteCache.Entry {
        let bytes = Array(path.utf8)
        let segments = (try? PercentDecoding.pathSegments(of: bytes)) ?? []
        return RouteCache.Entry(
            owner: owner, bytes: bytes, hash: hash ?? bytes.withUnsafeBufferPointer { RouteCache.hash($0) }, method: method,
            rawPath: path, segments: segments, resolution: .notFound)
    }

    private static func lookUp(
        _ cache: RouteCache, _ path: String, method: String = "GET", owner: UInt64, hash: UInt64? = nil
    ) -> RouteCache.Entry? {
        Array(path.utf8).withUnsafeBufferPointer { bytes in
            cache.entry(owner: owner, bytes: bytes, hash: hash ?? RouteCache.hash(bytes), method: method)
        }
    }

    @Test func anEntryAnswersOnlyForItsOwnPathMethodAndServer() {
        let cache = RouteCache()
        let owner = RouteCache.newOwner()
        let other = RouteCache.newOwner()
        #expect(owner != other)
        let kept = Self.entry("/api/pages/counters/actions", method: "POST", owner: owner)
        cache.keep(kept)
        #expect(Self.lookUp(cache, "/api/pages/counters/actions", method: "POST", owner: owner) === kept)
        #expect(Self.lookUp(cache, "/api/pages/counters/actions", method: "GET", owner: owner) == nil)
        #expect(Self.lookUp(cache, "/api/pages/counters/actions", method: "POST", owner: other) == nil)
        #expect(Self.lookUp(cache, "/api/pages/counters/actionz", method: "POST", owner: owner) == nil)
        // The same hash with other bytes of the same length (a collision) is not taken for the path.
        #expect(
            Self.lookUp(cache, "/api/pages/counters/actionz", method: "POST", owner: owner, hash: kept.hash)
                == nil)
    }

    @Test func pathsOnTheSameSlotReplaceEachOther() throws {
        let cache = RouteCache()
        let owner = RouteCache.newOwner()
        let first = Self.entry("/a/0", owner: owner)
        let slotMask = UInt64(RouteCache.slotCount - 1)
        let sameSlot = try #require(
            (1..<10_000).lazy.map { "/a/\($0)" }.first { path in
                (Array(path.utf8).withUnsafeBufferPointer { RouteCache.hash($0) } & slotMask) == (first.hash & slotMask)
            })
        cache.keep(first)
        let second = Self.entry(sameSlot, owner: owner)
        cache.keep(second)
        #expect(Self.lookUp(cache, "/a/0", owner: owner) == nil)
        #expect(Self.lookUp(cache, sameSlot, owner: owner) === second)
    }

    @Test func aPathLongerThanTheLimitIsNotKept() {
        let cache = RouteCache()
        let owner = RouteCache.newOwner()
        let long = "/" + String(repeating: "x", count: RouteCache.longestPath)
        cache.keep(Self.entry(long, owner: owner))
        #expect(Self.lookUp(cache, long, owner: owner) == nil)
        let longest = "/" + String(repeating: "x", count: RouteCache.longestPath - 1)
        let kept = Self.entry(longest, owner: owner)
        cache.keep(kept)
        #expect(Self.lookUp(cache, longest, owner: owner) === kept)
    }

    @Test func theHashSeesEveryByte() {
        let path = Array("/api/pages/counters/actions".utf8)
        let hash = path.withUnsafeBufferPointer { RouteCache.hash($0) }
        for index in path.indices {
            var changed = path
            changed[index] ^= 1
            #expect(changed.withUnsafeBufferPointer { RouteCache.hash($0) } != hash, "byte \(index)")
        }
        #expect(Array(path.dropLast()).withUnsafeBufferPointer { RouteCache.hash($0) } != hash)
    }
}
