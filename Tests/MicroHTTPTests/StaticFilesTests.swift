import Foundation
import MicroHTTP
import Testing

/// A served directory `base/public` with a secret next to it (`base/secret.txt`), outside what is served.
struct StaticSite: Sendable {
    let base: TemporaryDirectory
    let secret: String
    var publicPath: String { base.path + "/public" }

    static let files: [(path: String, contents: String)] = [
        ("public/index.html", "<!doctype html><title>home</title>"),
        ("public/app.js", "console.log('app');"),
        ("public/style.css", "body { color: black; }"),
        ("public/data.json", #"{"answer":42}"#),
        ("public/sub/index.html", "<p>sub index</p>"),
        ("public/sub/page.txt", "sub page"),
        ("public/.env", "DOTFILE=1"),
        ("public/big.bin", String(repeating: "b", count: 4096)),
    ]

    init() throws {
        base = try TemporaryDirectory()
        secret = "TOP-SECRET-\(UUID().uuidString)"
        try base.makeDirectory("public/sub")
        try base.makeDirectory("public/empty")
        for file in Self.files { try base.write(file.path, file.contents) }
        try base.write("secret.txt", secret)
        // Links that point out of the served directory, and one that stays inside.
        try base.symlink("public/link-to-secret.txt", to: base.path + "/secret.txt")
        try base.symlink("public/outside", to: base.path)
        try base.symlink("public/relative-out.txt", to: "../secret.txt")
        try base.symlink("public/alias.js", to: "app.js")
    }

    func contents(_ path: String) -> String { Self.files.first { $0.path == "public" + path }?.contents ?? "" }

    /// Starts a server whose router has one API route and these files as the fallback.
    @discardableResult
    func withServer<T>(maxFileBytes: Int = 64 << 20, _ body: (HTTPServer) async throws -> T) async throws -> T {
        var router = HTTPRouter()
        router.get("/api/ping") { _ in .text("pong") }
        router.fallback = StaticFiles(directory: publicPath, maxFileBytes: maxFileBytes).handler
        defer { base.remove() }
        return try await MicroHTTPTests.withServer(router: router, body)
    }
}

@Suite struct StaticFilesTests {
    @Test(arguments: [
        ("/index.html", "/index.html", "text/html; charset=utf-8"),
        ("/app.js", "/app.js", "text/javascript; charset=utf-8"),
        ("/style.css", "/style.css", "text/css; charset=utf-8"),
        ("/data.json", "/data.json", "application/json"),
        ("/", "/index.html", "text/html; charset=utf-8"),
        ("/sub", "/sub/index.html", "text/html; charset=utf-8"),
        ("/sub/", "/sub/index.html", "text/html; charset=utf-8"),
        ("/sub/page.txt", "/sub/page.txt", "text/plain; charset=utf-8"),
        ("/alias.js", "/app.js", "text/javascript; charset=utf-8"),
        ("/%61pp.js", "/app.js", "text/javascript; charset=utf-8"),
    ])
    func filesAreServedWithTheirContentTypeAndCachingHeaders(target: String, file: String, contentType: String) async throws {
        let site = try StaticSite()
        try await site.withServer { server in
            let port = server.port
            let response = try await blocking { try RawHTTP.request(port: port, "GET", target) }
            #expect(response.status == 200)
            #expect(response.text == site.contents(file))
            #expect(response.header("Content-Type") == contentType)
            #expect(response.header("Content-Length") == String(site.contents(file).utf8.count))
            #expect(response.header("Cache-Control") == "no-cache")
            #expect(response.header("X-Content-Type-Options") == "nosniff")
            let etag = try #require(response.header("ETag"))
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count > 2)
        }
    }

    @Test func routesComeBeforeTheFallback() async throws {
        let site = try StaticSite()
        try await site.withServer { server in
            let port = server.port
            let response = try await blocking { try RawHTTP.request(port: port, "GET", "/api/ping") }
            #expect(response.text == "pong")
        }
    }

    @Test func matchingIfNoneMatchGets304WithNoBody() async throws {
        let site = try StaticSite()
        try await site.withServer { server in
            let port = server.port
            let (first, notModified, weak, listed, star, next, stray) = try await blocking {
                () throws -> (RawResponse, RawResponse, RawResponse, RawResponse, RawResponse, RawResponse, [UInt8]) in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                let first = try connection.request("GET", "/app.js")
                let etag = first.header("ETag") ?? "missing"
                let notModified = try connection.request("GET", "/app.js", headers: [("If-None-Match", etag)])
                let weak = try connection.request("GET", "/app.js", headers: [("If-None-Match", "W/\(etag)")])
                let listed = try connection.request("GET", "/app.js", headers: [("If-None-Match", "\"other\", \(etag)")])
                let star = try connection.request("GET", "/app.js", headers: [("If-None-Match", "*")])
                // Had the 304 carried a body, this response would not parse.
                let next = try connection.request("GET", "/app.js", headers: [("If-None-Match", "\"stale\"")], keepAlive: false)
                return (first, notModified, weak, listed, star, next, connection.bufferedBytes(waiting: .milliseconds(50)))
            }
            let etag = try #require(first.header("ETag"))
            #expect(notModified.status == 304)
            #expect(notModified.header("ETag") == etag)
            #expect(notModified.header("Content-Type") == nil)
            #expect(notModified.body.isEmpty)
            #expect(weak.status == 304)
            #expect(listed.status == 304)
            #expect(star.status == 304)
            #expect(next.status == 200)
            #expect(next.text == site.contents("/app.js"))
            #expect(stray.isEmpty)
        }
    }

    @Test func theEntityTagChangesWhenTheFileChanges() async throws {
        let site = try StaticSite()
        try await site.withServer { server in
            let port = server.port
            let before = try await blocking { try RawHTTP.request(port: port, "GET", "/data.json") }
            try site.base.write("public/data.json", #"{"answer":43,"more":true}"#)
            let after = try await blocking { try RawHTTP.request(port: port, "GET", "/data.json") }
            let stale = try await blocking {
                try RawHTTP.request(port: port, "GET", "/data.json", headers: [("If-None-Match", before.header("ETag") ?? "")])
            }
            #expect(before.header("ETag") != nil)
            #expect(before.header("ETag") != after.header("ETag"))
            #expect(after.text == #"{"answer":43,"more":true}"#)
            #expect(stale.status == 200)
        }
    }

    @Test func headSendsTheHeadersAndNoBody() async throws {
        let site = try StaticSite()
        try await site.withServer { server in
            let port = server.port
            let (head, next, stray) = try await blocking { () throws -> (RawResponse, RawResponse, [UInt8]) in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                let head = try connection.request("HEAD", "/style.css")
                let next = try connection.request("GET", "/data.json", keepAlive: false)
                return (head, next, connection.bufferedBytes(waiting: .milliseconds(50)))
            }
            #expect(head.status == 200)
            #expect(head.header("Content-Type") == "text/css; charset=utf-8")
            #expect(head.header("Content-Length") == String(site.contents("/style.css").utf8.count))
            #expect(head.header("ETag") != nil)
            #expect(head.body.isEmpty)
            #expect(next.text == site.contents("/data.json"))
            #expect(stray.isEmpty)
        }
    }

    @Test(arguments: [
        ("/.env", 404), ("/sub/.env", 404), ("/missing.html", 404), ("/sub/missing", 404), ("/empty", 404), ("/empty/", 404),
    ])
    func dotfilesMissingFilesAndDirectoriesWithoutIndexAre404(target: String, status: Int) async throws {
        let site = try StaticSite()
        try await site.withServer { server in
            let port = server.port
            let response = try await blocking { try RawHTTP.request(port: port, "GET", target) }
            #expect(response.status == status)
            #expect(errorCode(response) == "not_found")
            #expect(!response.text.contains("DOTFILE"))
        }
    }

    @Test func otherMethodsOnFilesAre404NotTheFile() async throws {
        let site = try StaticSite()
        try await site.withServer { server in
            let port = server.port
            let response = try await blocking { try RawHTTP.request(port: port, "POST", "/index.html", body: []) }
            #expect(response.status == 404)
            #expect(errorCode(response) == "not_found")
        }
    }

    @Test func filesOverTheSizeLimitAre404() async throws {
        let site = try StaticSite()
        try await site.withServer(maxFileBytes: 1024) { server in
            let port = server.port
            let big = try await blocking { try RawHTTP.request(port: port, "GET", "/big.bin") }
            let small = try await blocking { try RawHTTP.request(port: port, "GET", "/app.js") }
            #expect(big.status == 404)
            #expect(small.status == 200)
        }
    }
}

/// Attempts to read `secret.txt`, which lies next to (outside) the served directory.
@Suite struct TraversalTests {
    /// Who answers: MicroHTTP with a JSON error, MicroHTTP with a file from inside the served directory, or
    /// libmicrohttpd (its own HTML).
    enum Answerer: Sendable { case microHTTP(code: String), insideFile(String), library }

    struct Attack: Sendable, CustomTestStringConvertible {
        var name: String
        var requestLine: [UInt8]
        var status: Int
        var answerer: Answerer
        var testDescription: String { name }

        init(_ target: String, _ status: Int, _ answerer: Answerer) {
            name = target
            requestLine = Array("GET \(target) HTTP/1.1".utf8)
            self.status = status
            self.answerer = answerer
        }

        init(name: String, requestLine: [UInt8], _ status: Int, _ answerer: Answerer) {
            self.name = name
            self.requestLine = requestLine
            self.status = status
            self.answerer = answerer
        }
    }

    static let invalid = Answerer.microHTTP(code: "invalid_path")
    static let notFound = Answerer.microHTTP(code: "not_found")

    static let attacks: [Attack] = [
        Attack("/../secret.txt", 400, invalid),
        Attack("/%2e%2e/secret.txt", 400, invalid),
        Attack("/%2E%2E/secret.txt", 400, invalid),
        Attack("/.%2e/secret.txt", 400, invalid),
        Attack("/%2e./secret.txt", 400, invalid),
        Attack("/..%2fsecret.txt", 400, invalid),
        Attack("/..%2Fsecret.txt", 400, invalid),
        Attack("/sub/../../secret.txt", 400, invalid),
        Attack("/sub/%2e%2e/%2e%2e/secret.txt", 400, invalid),
        Attack("/sub/..%2f..%2fsecret.txt", 400, invalid),
        Attack("/./../secret.txt", 400, invalid),
        Attack("/..\\secret.txt", 400, invalid),
        Attack("/..%5csecret.txt", 400, invalid),
        Attack("/..%5Csecret.txt", 400, invalid),
        Attack("/%00", 400, invalid),
        Attack("/index.html%00.txt", 400, invalid),
        Attack("/%2e%2e%00/secret.txt", 400, invalid),
        Attack("/%c0%ae%c0%ae/secret.txt", 400, invalid),
        Attack("/%C0%AE%C0%AE/secret.txt", 400, invalid),
        Attack("/%e0%80%ae%e0%80%ae/secret.txt", 400, invalid),
        Attack("/%c0%af../secret.txt", 400, invalid),
        Attack("/%252e%252e/secret.txt", 404, notFound),
        Attack("/%2", 400, invalid),
        Attack("http://x/../secret.txt", 400, invalid),
        Attack("http://127.0.0.1/secret.txt", 404, notFound),
        Attack("/link-to-secret.txt", 404, notFound),
        Attack("/relative-out.txt", 404, notFound),
        Attack("/outside/secret.txt", 404, notFound),
        Attack("/outside", 404, notFound),
        Attack("/outside/", 404, notFound),
        // Through the outward link and back in: the file really lies inside the directory, so it is served.
        Attack("/outside/public/index.html", 200, .insideFile("/index.html")),
        Attack("//secret.txt", 404, notFound),
        Attack("/secret.txt", 404, notFound),
        Attack(name: "raw NUL then ../", requestLine: Array("GET /..".utf8) + [0] + Array("/secret.txt HTTP/1.1".utf8), 400, invalid),
        Attack(name: "raw NUL after a file name", requestLine: Array("GET /secret.txt".utf8) + [0] + Array(".html HTTP/1.1".utf8), 404, notFound),
        // libmicrohttpd hands over the target as a C string, so everything from the NUL on is cut off: here
        // the path MicroHTTP sees is empty, which serves index.html.
        Attack(
            name: "raw NUL as the whole path", requestLine: Array("GET ".utf8) + [0] + Array("/../secret.txt HTTP/1.1".utf8), 200,
            .insideFile("/index.html")),
        Attack(name: "raw CR inside the target", requestLine: Array("GET /..\r/secret.txt HTTP/1.1".utf8), 404, notFound),
        Attack(name: "raw LF inside the target", requestLine: Array("GET /..\n/secret.txt HTTP/1.1".utf8), 400, .library),
        Attack(name: "raw space inside the target", requestLine: Array("GET /.. /secret.txt HTTP/1.1".utf8), 404, notFound),
        Attack(name: "tab inside the target", requestLine: Array("GET /..\t/secret.txt HTTP/1.1".utf8), 404, notFound),
    ]

    @Test(arguments: attacks)
    func theSecretOutsideTheDirectoryIsNeverServed(_ attack: Attack) async throws {
        let site = try StaticSite()
        // The secret is really there, one level up: a traversal that worked would find it.
        #expect(try String(contentsOfFile: site.base.path + "/secret.txt", encoding: .utf8) == site.secret)
        try await site.withServer { server in
            let port = server.port
            let bytes = attack.requestLine + Array("\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
            let everything = try await blocking { () throws -> [UInt8] in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                try connection.send(bytes)
                return connection.waitForClose(timeout: .seconds(3)).bytes
            }
            let text = String(decoding: everything, as: UTF8.self)
            #expect(!text.contains(site.secret))
            #expect(!text.contains("TOP-SECRET"))
            let response = try await blocking { try RawHTTP.exchange(port: port, bytes: bytes) }
            // MicroHTTP's own engine refuses a request line with a control byte or a space inside its target (400
            // `malformed_request`) where libmicrohttpd cuts or keeps it.
            let refusedByEngine = testEngine == .epoll && attack.requestLine.contains { $0 < 0x20 || $0 == 0x7F }
                || testEngine == .epoll && attack.requestLine.split(separator: 0x20).count > 3
            let (status, answerer) = refusedByEngine ? (400, Answerer.microHTTP(code: "malformed_request")) : (attack.status, attack.answerer)
            #expect(response.status == status)
            switch answerer {
            case .microHTTP(let code):
                #expect(response.header("Content-Type") == "application/json")
                #expect(errorCode(response) == code)
            case .insideFile(let path):
                #expect(response.text == site.contents(path))
            case .library:
                #expect(response.header("Content-Type") == nil)
                #expect(response.text.hasPrefix("<html>"))
            }
        }
    }
}
