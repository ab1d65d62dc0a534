import Dispatch
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
        let ids = try await blockingEvents(port: port, session: session, lastEventID: seqs[0], count: 2).map(\.id)
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

    @Test func aTimerStillPendingGoesOnOnTheRealClockAfterARestart() async throws {
        let file = ScratchStoreFile()
        let firstStore = try file.open()
        var server = try TestServer(store: firstStore, units: [.ticker], root: .ticker)
        let port = server.port
        let created = try await exchange("POST", "/api/sessions", port: port, body: [:])
        let session = try #require(created.body["session"]?.stringValue)
        try await waitUntil("a few ticks") {
            (try await exchange("GET", "/api/pages/ticker", port: port, session: session).body["view"]?["ticks"]?.intValue ?? 0) >= 5
        }
        server.stop()
        // As a process's end would: the stopped server's page keeps ticking, and its records must not reach the file
        // beside the restarted server's (two live stores on one file; seen once, the restored answer had no view).
        firstStore.close()
        server = try TestServer(port: port, store: try file.open(), units: [.ticker], root: .ticker)
        defer { server.stop() }
        let restored = try await exchange("GET", "/api/pages/ticker", port: port, session: session)
        let ticksAtRestore = try #require(restored.body["view"]?["ticks"]?.intValue, "the restored page: \(restored)")
        #expect(ticksAtRestore >= 5)
        // The logged ticks came back by replay; the interval goes on from there to its last tick.
        try await waitUntil("the last tick", timeout: 10) {
            try await exchange("GET", "/api/pages/ticker", port: port, session: session).body["view"]?["ticks"]?.intValue
                == TickerViewModel.lastTick
        }
        let final = try await exchange("GET", "/api/pages/ticker", port: port, session: session)
        #expect((final.body["rev"]?.intValue ?? 0) == TickerViewModel.lastTick)
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

    @Test func aServerWithSessionLogsOffRefusesThemAndKeepsEverythingElse() async throws {
        let file = ScratchStoreFile()
        let logsOff: (inout ServerConfiguration) -> Void = { $0.servesSessionLogs = false }
        let server = try TestServer(store: try file.open(), configure: logsOff)
        defer { server.stop() }
        let port = server.port
        let created = try await exchange("POST", "/api/sessions", port: port, body: [:])
        let session = try #require(created.body["session"]?.stringValue)
        let saved = try await exchange(
            "POST", "/api/pages/home/actions", port: port, session: session, body: ["action": "edit"])
        #expect(saved.status == 200)
        let log = try await exchange("GET", "/api/session/log", port: port, session: session)
        #expect(log.status == 403)
        #expect(log.body["error"]?["code"]?.stringValue == "session_log_disabled", "\(log.body)")
        // Not even whether a session exists is told: an unknown one gets the same answer.
        let unknown = try await exchange("GET", "/api/session/log", port: port, session: "unknown")
        #expect(unknown.status == 403)
        #expect(try await exchange("GET", "/api/pages/editor", port: port, session: session).status == 200)
    }

    @Test func sessionLogsAreOnUnlessSetOff() throws {
        #expect(try ServerConfiguration.parse(arguments: [], environment: [:]).servesSessionLogs)
        #expect(!(try ServerConfiguration.parse(arguments: [], environment: ["SESSION_LOG": "off"]).servesSessionLogs))
        #expect(try ServerConfiguration.parse(arguments: ["--session-log", "ON"], environment: ["SESSION_LOG": "off"]).servesSessionLogs)
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.parse(arguments: [], environment: ["SESSION_LOG": "maybe"])
        }
    }
}

/// A blocking TCP socket connected to 127.0.0.1:`port`, whose reads give up after `receiveTimeoutSeconds`.
func connectedSocket(port: Int, receiveTimeoutSeconds: Int) throws -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        close(descriptor)
        throw TimedOut(what: "a connection to port \(port)")
    }
    return descriptor
}

/// An event read off a stream by ``blockingEvents(port:session:lastEventID:count:)``.
struct StreamedEvent {
    let id: Int
    let name: String
    let data: JSONValue
}

/// Opens `GET /api/events` over a plain socket with `Last-Event-ID`, and returns the first `count` events that
/// carry an id (Foundation on Linux has no streaming `bytes(for:)`).
func blockingEvents(port: Int, session: String, lastEventID: Int, count: Int) async throws -> [StreamedEvent] {
    // On a thread of its own: a blocking read on the cooperative pool (two threads here) would starve the tests
    // running beside it.
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try readEvents(port: port, session: session, lastEventID: lastEventID, count: count) })
        }
    }
}

private func readEvents(port: Int, session: String, lastEventID: Int, count: Int) throws -> [StreamedEvent] {
    do {
        let descriptor = try connectedSocket(port: port, receiveTimeoutSeconds: 10)
        defer { close(descriptor) }
        let request = "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Session-ID: \(session)\r\nLast-Event-ID: \(lastEventID)\r\n\r\n"
        _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        func parsed() -> [StreamedEvent] {
            var events: [StreamedEvent] = []
            for block in text.components(separatedBy: "\n\n") {
                var id: Int?
                var name = "message"
                var data = ""
                for line in block.split(separator: "\n") {
                    if line.hasPrefix("id:") { id = Int(line.dropFirst(3).trimmingCharacters(in: .whitespaces)) }
                    if line.hasPrefix("event:") { name = line.dropFirst(6).trimmingCharacters(in: .whitespaces) }
                    if line.hasPrefix("data:") { data += line.dropFirst(5).trimmingCharacters(in: .whitespaces) }
                }
                if let id, let value = try? JSONValue(parsing: Array(data.utf8)) {
                    events.append(StreamedEvent(id: id, name: name, data: value))
                }
            }
            return events
        }
        while true {
            let events = parsed()
            if events.count >= count { return Array(events.prefix(count)) }
            let received = recv(descriptor, &buffer, buffer.count, 0)
            if received <= 0 { return events }
            text += String(decoding: buffer[0..<received], as: UTF8.self)
        }
    }
}

// MARK: - A unit whose code changes between two runs (a deploy).

struct TallyInput { let increment: Signal<Void> }
struct TallyOutput { let count: Driver<Int> }

struct TallyView: View {
    func input(from actions: Actions<NamedAction>) -> TallyInput { TallyInput(increment: actions.signal("increment")) }
    func bind(_ output: TallyOutput, to page: Page) { page.bind(output.count, at: "/count") }
}

/// The first deploy: `increment` adds one.
final class TallyByOneViewModel: ViewModel {
    init(context: UnitContext) {}
    func transform(_ input: TallyInput) -> TallyOutput {
        TallyOutput(count: input.increment.map { 1 }.scan(0) { $0 + $1 }.asDriver(startingWith: 0))
    }
}

/// The next deploy: `increment` adds ten, so the logged patches no longer come out of a replay.
final class TallyByTenViewModel: ViewModel {
    init(context: UnitContext) {}
    func transform(_ input: TallyInput) -> TallyOutput {
        TallyOutput(count: input.increment.map { 10 }.scan(0) { $0 + $1 }.asDriver(startingWith: 0))
    }
}

extension UnitCase {
    static let tallyByOne = UnitCase("tally", view: TallyView.self, viewModel: TallyByOneViewModel.self)
    static let tallyByTen = UnitCase("tally", view: TallyView.self, viewModel: TallyByTenViewModel.self)
}

@Suite(.serialized) struct DivergenceTests {
    @Test func aPageWhoseCodeChangedComesBackFreshWithASnapshotAndNoWrongPatch() async throws {
        let file = ScratchStoreFile()
        var server = try TestServer(store: try file.open(), units: [.tallyByOne], root: .tallyByOne)
        let port = server.port
        let created = try await exchange("POST", "/api/sessions", port: port, body: [:])
        let session = try #require(created.body["session"]?.stringValue)
        var lastSeq = 0
        for _ in 0..<2 {
            let done = try await exchange("POST", "/api/pages/tally/actions", port: port, session: session, body: ["action": "increment"])
            lastSeq = try #require(done.body["seq"]?.intValue)
        }
        let before = try await exchange("GET", "/api/pages/tally", port: port, session: session)
        #expect(before.body["view"] == ["count": 2])
        let revisionBefore = try #require(before.body["rev"]?.intValue)
        server.stop()

        server = try TestServer(port: port, store: try file.open(), units: [.tallyByTen], root: .tallyByTen)
        defer { server.stop() }
        // A client that was following the page resumes its stream: it gets a snapshot of the fresh page, never a
        // patch computed by the new code on the old state.
        let after = try await exchange("GET", "/api/pages/tally", port: port, session: session)
        #expect(after.status == 200)
        #expect(after.body["view"] == ["count": 0])
        let revisionAfter = try #require(after.body["rev"]?.intValue)
        #expect(revisionAfter > revisionBefore)
        #expect((after.body["seq"]?.intValue ?? 0) > lastSeq)
        let streamed = try await blockingEvents(port: port, session: session, lastEventID: lastSeq, count: 1)
        #expect(streamed.first?.name == "snapshot")
        #expect(streamed.first?.data["view"] == ["count": 0])
        let metrics = try await exchange("GET", "/metrics", port: port)
        #expect(String(decoding: metrics.raw, as: UTF8.self).contains("mvvmr_session_divergences_total 1"))
        // The page goes on under the new code, its revisions after the fresh one.
        let next = try await exchange("POST", "/api/pages/tally/actions", port: port, session: session, body: ["action": "increment"])
        #expect(next.body["rev"]?.intValue == revisionAfter + 1)
        let final = try await exchange("GET", "/api/pages/tally", port: port, session: session)
        #expect(final.body["view"] == ["count": 10])
        server.stop()

        // The next restart replays the log, rebind record included: no new divergence, the same page.
        server = try TestServer(port: port, store: try file.open(), units: [.tallyByTen], root: .tallyByTen)
        let again = try await exchange("GET", "/api/pages/tally", port: port, session: session)
        #expect(again.body["view"] == ["count": 10])
        #expect(again.body["rev"] == final.body["rev"])
        let metricsAgain = try await exchange("GET", "/metrics", port: port)
        #expect(!String(decoding: metricsAgain.raw, as: UTF8.self).contains("mvvmr_session_divergences_total 1"))
    }
}

@Suite(.serialized) struct DivergenceBesideOtherPagesTests {
    /// Only the page whose code changed comes back fresh: another page of the session keeps every acknowledged
    /// action, and no revision or event number goes back (a skipped record's numbers still count).
    @Test func theOtherPagesOfTheSessionKeepTheirStateAndNumbers() async throws {
        let file = ScratchStoreFile()
        var server = try TestServer(store: try file.open(), units: [.tallyByOne, .counter], root: .tallyByOne)
        let port = server.port
        let created = try await exchange("POST", "/api/sessions", port: port, body: [:])
        let session = try #require(created.body["session"]?.stringValue)
        _ = try await exchange("POST", "/api/pages/tally/actions", port: port, session: session, body: ["action": "increment"])
        _ = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        var last = JSONValue.null
        for _ in 0..<3 {
            last = try await exchange("POST", "/api/pages/counter/actions", port: port, session: session, body: ["action": "increment"]).body
        }
        _ = try await exchange("POST", "/api/pages/tally/actions", port: port, session: session, body: ["action": "increment"])
        let counterBefore = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(counterBefore.body["view"] == ["count": 3])
        server.stop()

        server = try TestServer(port: port, store: try file.open(), units: [.tallyByTen, .counter], root: .tallyByTen)
        defer { server.stop() }
        let counterAfter = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(counterAfter.body["view"] == ["count": 3])
        #expect(counterAfter.body["rev"] == counterBefore.body["rev"])
        #expect((counterAfter.body["seq"]?.intValue ?? 0) >= (counterBefore.body["seq"]?.intValue ?? .max))
        let next = try await exchange(
            "POST", "/api/pages/counter/actions", port: port, session: session,
            body: ["action": "increment", "rev": last["rev"] ?? .null])
        #expect(next.status == 200)
        #expect(next.body["rev"]?.intValue == (last["rev"]?.intValue ?? -1) + 1)
        let tally = try await exchange("GET", "/api/pages/tally", port: port, session: session)
        #expect(tally.body["view"] == ["count": 0])
        let metrics = String(decoding: try await exchange("GET", "/metrics", port: port).raw, as: UTF8.self)
        #expect(metrics.contains("mvvmr_session_divergences_total 1"))
    }
}

@Suite(.serialized) struct PageRecordCapTests {
    @Test func aPageWhoseLogPassedTheCapIsBoundFreshOnRestoreAndItsRecordsLeaveTheStore() async throws {
        let file = ScratchStoreFile()
        let capped: (inout ServerConfiguration) -> Void = { $0.maxPageRecords = 3 }
        var server = try TestServer(store: try file.open(), units: [.counter], root: .counter, configure: capped)
        let port = server.port
        let created = try await exchange("POST", "/api/sessions", port: port, body: [:])
        let session = try #require(created.body["session"]?.stringValue)
        for _ in 0..<5 {
            _ = try await exchange("POST", "/api/pages/counter/actions", port: port, session: session, body: ["action": "increment"])
        }
        let before = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(before.body["view"] == ["count": 5])
        let logBefore = try SessionLog(bytes: Array(try await exchange("GET", "/api/session/log", port: port, session: session).raw))
        #expect(logBefore.records.count == 6)
        server.stop()

        server = try TestServer(port: port, store: try file.open(), units: [.counter], root: .counter, configure: capped)
        let after = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(after.body["view"] == ["count": 0])
        #expect((after.body["rev"]?.intValue ?? 0) > (before.body["rev"]?.intValue ?? .max))
        let metrics = String(decoding: try await exchange("GET", "/metrics", port: port).raw, as: UTF8.self)
        #expect(metrics.contains("mvvmr_session_page_resets_total 1"))
        // The five actions are gone from the store: the start and the rebind are left.
        let logAfter = try SessionLog(bytes: Array(try await exchange("GET", "/api/session/log", port: port, session: session).raw))
        #expect(logAfter.records.map(\.number) == [1, 7])
        let next = try await exchange("POST", "/api/pages/counter/actions", port: port, session: session, body: ["action": "increment"])
        #expect(next.body["rev"]?.intValue == (after.body["rev"]?.intValue ?? -1) + 1)
        server.stop()

        // What is left replays exactly: no reset this time.
        server = try TestServer(port: port, store: try file.open(), units: [.counter], root: .counter, configure: capped)
        defer { server.stop() }
        let again = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(again.body["view"] == ["count": 1])
        #expect(again.body["rev"] == next.body["rev"])
        let metricsAgain = String(decoding: try await exchange("GET", "/metrics", port: port).raw, as: UTF8.self)
        #expect(!metricsAgain.contains("mvvmr_session_page_resets_total 1"))
        #expect(!metricsAgain.contains("mvvmr_session_divergences_total 1"))
    }
}
