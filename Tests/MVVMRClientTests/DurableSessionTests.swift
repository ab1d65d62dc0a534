import Foundation
import JSONPatch
import MVVMR
import MVVMRServer
import MVVMRTesting
import Synchronization
import Testing

@testable import MVVMRClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A scratch SQLite file under the temporary directory, removed (with its WAL files) when the test ends.
final class ScratchStoreFile: Sendable {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "mvvmr-store-\(UUID().uuidString).sqlite"
    }

    func open(_ durability: SessionDurability = .process) throws -> SQLiteSessionStore {
        try SQLiteSessionStore(path: path, durability: durability)
    }

    deinit {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// One HTTP exchange outside the client, with the session in `X-Session-ID`.
func exchange(
    _ method: String, _ path: String, port: Int, session: String? = nil, body: JSONValue? = nil,
    headers: [String: String] = [:]
) async throws -> (status: Int, body: JSONValue, raw: Data) {
    var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(port)\(path)")))
    request.httpMethod = method
    if let session { request.setValue(session, forHTTPHeaderField: "X-Session-ID") }
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    if let body {
        request.httpBody = Data(body.jsonBytes)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    let json = data.isEmpty ? JSONValue.null : ((try? JSONValue(parsing: data)) ?? .null)
    return (status, json, data)
}

/// Sessions outlive their server: restarted on the same store, a server restores each session by replaying
/// its log, on the session's first request.
@Suite(.serialized) struct DurableSessionTests {
    @Test(arguments: SessionDurability.allCases)
    func aRestartOnTheSameStoreKeepsTheSessionItsPagesAndItsNumbering(durability: SessionDurability) async throws {
        let file = ScratchStoreFile()
        var server = try TestServer(store: try file.open(durability), units: [.counter], root: .counter)
        let port = server.port
        let created = try await exchange("POST", "/api/sessions", port: port, body: [:])
        #expect(created.status == 201)
        let session = try #require(created.body["session"]?.stringValue)
        for _ in 0..<2 {
            let done = try await exchange("POST", "/api/pages/counter/actions", port: port, session: session, body: ["action": "increment"])
            #expect(done.status == 200)
        }
        let before = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(before.body["view"]?["count"] == 2)
        server.stop()

        server = try TestServer(port: port, store: try file.open(durability), units: [.counter], root: .counter)
        defer { server.stop() }
        let after = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(after.status == 200)
        #expect(after.body["view"] == before.body["view"])
        #expect(after.body["rev"] == before.body["rev"])
        #expect(after.body["seq"] == before.body["seq"])
        let next = try await exchange("POST", "/api/pages/counter/actions", port: port, session: session, body: ["action": "add", "value": 5])
        #expect(next.status == 200)
        #expect(next.body["rev"]?.intValue == (before.body["rev"]?.intValue ?? -1) + 1)
        #expect(next.body["seq"]?.intValue == (before.body["seq"]?.intValue ?? -1) + 1)
        let final = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(final.body["view"]?["count"] == 7)
    }

    @Test func theSwiftClientComesBackToTheSameSessionAndStackAfterARestart() async throws {
        let file = ScratchStoreFile()
        var server = try TestServer(store: try file.open())
        let port = server.port
        let client = try server.client()
        defer { client.stopEvents() }
        let recorder = ChangeRecorder(client)
        try await client.openSession()
        try await client.send("edit")
        #expect(client.navigation.stack == ["home", "editor"])
        let identifier = try #require(client.sessionID)
        client.startEvents()
        try await waitUntil("the event stream") { client.isEventStreamConnected }

        server.stop()
        server = try TestServer(port: port, store: try file.open())
        defer { server.stop() }
        try await waitUntil("the stream back", timeout: 10) { client.isEventStreamConnected }
        try await client.send("save", value: "Ada")
        #expect(client.sessionID == identifier)
        #expect(!recorder.contains { if case .sessionRecovered = $0 { true } else { false } })
        #expect(client.navigation.stack == ["home"])
        #expect(client.page("home")?.view["user"] == "Ada")
    }

    @Test func aLastEventIDFromBeforeTheRestartResumesWithNothingMissed() async throws {
        let file = ScratchStoreFile()
        var server = try TestServer(store: try file.open(), units: [.counter], root: .counter)
        let port = server.port
        let created = try await exchange("POST", "/api/sessions", port: port, body: [:])
        let session = try #require(created.body["session"]?.stringValue)
        var seqs: [Int] = []
        for _ in 0..<3 {
            let done = try await exchange("POST", "/api/pages/counter/actions", port: port, session: session, body: ["action": "increment"])
            seqs.append(try #require(done.body["seq"]?.intValue))
        }
        server.stop()
        server = try TestServer(port: port, store: try file.open(), units: [.counter], root: .counter)
        defer { server.stop() }
        // Read the stream from the first action on: the two later patches, replayed from the restored log.
        let ids = try await blockingEventIDs(
            port: port, session: session, lastEventID: seqs[0], count: 2)
        #expect(ids == [seqs[1], seqs[2]])
    }

    @Test func aRestoredAsyncResultIsNotFetchedAgain() async throws {
        let file = ScratchStoreFile()
        var server = try TestServer(store: try file.open(), units: [.forecast], root: .forecast)
        let port = server.port
        let created = try await exchange("POST", "/api/sessions", port: port, body: [:])
        let session = try #require(created.body["session"]?.stringValue)
        _ = try await exchange("POST", "/api/pages/forecast/actions", port: port, session: session, body: ["action": "refresh"])
        try await waitUntil("the forecast") {
            try await exchange("GET", "/api/pages/forecast", port: port, session: session).body["view"]?["forecast"] == "sunny"
        }
        #expect(server.forecastCalls.value == 1)
        server.stop()
        server = try TestServer(port: port, store: try file.open(), units: [.forecast], root: .forecast)
        defer { server.stop() }
        let restored = try await exchange("GET", "/api/pages/forecast", port: port, session: session)
        #expect(restored.body["view"]?["forecast"] == "sunny")
        #expect(server.forecastCalls.value == 0)
    }

    @Test func aLogFromTheServerReplaysInThePageTester() async throws {
        let file = ScratchStoreFile()
        let server = try TestServer(store: try file.open())
        defer { server.stop() }
        let port = server.port
        let created = try await exchange("POST", "/api/sessions", port: port, body: [:])
        let session = try #require(created.body["session"]?.stringValue)
        _ = try await exchange("POST", "/api/pages/home/actions", port: port, session: session, body: ["action": "edit"])
        _ = try await exchange("POST", "/api/pages/editor/actions", port: port, session: session, body: ["action": "save", "value": "Grace"])
        let log = try await exchange("GET", "/api/session/log", port: port, session: session)
        #expect(log.status == 200)
        let parsed = try SessionLog(bytes: Array(log.raw))
        #expect(parsed.records.count == 3)
        let replayed = PageTester.replay(parsed, registry: UnitRegistry(root: .home, units: [.home, .editor]))
        #expect(replayed.navigation.stack == ["home"])
        let served = try await exchange("GET", "/api/pages/home", port: port, session: session)
        #expect(replayed.pages.first { $0.unit == "home" }?.view == served.body["view"])
    }
}

/// Opens `GET /api/events` over a plain socket with `Last-Event-ID`, and returns the ids of the first `count`
/// events (Foundation on Linux has no streaming `bytes(for:)`).
func blockingEventIDs(port: Int, session: String, lastEventID: Int, count: Int) async throws -> [Int] {
    try await Task.detached {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw TimedOut(what: "a connection") }
        let request = "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Session-ID: \(session)\r\nLast-Event-ID: \(lastEventID)\r\n\r\n"
        _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let ids = text.split(separator: "\n").compactMap { line -> Int? in
                line.hasPrefix("id:") ? Int(line.dropFirst(3).trimmingCharacters(in: .whitespaces)) : nil
            }
            if ids.count >= count { return Array(ids.prefix(count)) }
            let received = recv(descriptor, &buffer, buffer.count, 0)
            if received <= 0 { return ids }
            text += String(decoding: buffer[0..<received], as: UTF8.self)
        }
    }.value
}
