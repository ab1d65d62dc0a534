import Foundation
import JSONPatch
import MVVMR
import MVVMRServer
import MVVMRTesting
import Testing

@testable import MVVMRClient

// MARK: - A counter whose ViewModel saves its count, and one whose saved state no longer gives its view.

/// The test counter, restorable: its saved state is its count.
final class RestorableCounterViewModel: RestorableViewModel {
    private let start: Int
    private let latest: LatestCount

    init(context: UnitContext) {
        start = 0
        latest = LatestCount(0)
    }

    init(context: UnitContext, restoring count: Int) {
        start = count
        latest = LatestCount(count)
    }

    var savedState: Int? { latest.value }

    func transform(_ input: CounterInput) -> CounterOutput {
        let latest = self.latest
        let counts = Signal.merge(input.increment.map { 1 }, input.add).scan(start) { count, step in
            latest.value = count + step
            return count + step
        }
        return CounterOutput(count: counts.asDriver(startingWith: start))
    }
}

/// A later deploy of the counter whose restoring initialiser reads the saved count wrongly (off by 100): the
/// restored view no longer matches the snapshot's digest.
final class DriftingCounterViewModel: RestorableViewModel {
    private let start: Int
    init(context: UnitContext) { start = 0 }
    init(context: UnitContext, restoring count: Int) { start = count + 100 }
    var savedState: Int? { start }
    func transform(_ input: CounterInput) -> CounterOutput {
        CounterOutput(count: Signal.merge(input.increment.map { 1 }, input.add).scan(start) { $0 + $1 }.asDriver(startingWith: start))
    }
}

/// The latest count of a counter's scan.
final class LatestCount {
    var value: Int
    init(_ value: Int) { self.value = value }
}

extension UnitCase {
    static let restorableCounter = UnitCase("counter", view: CounterView.self, viewModel: RestorableCounterViewModel.self)
    static let driftingCounter = UnitCase("counter", view: CounterView.self, viewModel: DriftingCounterViewModel.self)
}

/// Waits until the store holds a snapshot of `session` standing for at least `number` records.
func waitForSnapshot(of session: String, in store: any SessionStore, through number: Int = 1) async throws -> StoredSession {
    try await waitUntil("a snapshot through \(number)", timeout: 10) {
        (try store.load(session)?.snapshot?.number ?? 0) >= number
    }
    return try #require(try store.load(session))
}

@Suite(.serialized) struct CompactionTests {
    @Test func aLongCounterSessionIsCompactedAndARestartRestoresItExactlyKeyedRetriesIncluded() async throws {
        let file = ScratchStoreFile()
        var store = try file.open()
        var server = try TestServer(store: store, units: [.restorableCounter], root: .restorableCounter)
        let port = server.port
        let created = try await exchange("POST", "/api/sessions", port: port, body: [:])
        let session = try #require(created.body["session"]?.stringValue)
        let keyed = try await exchange(
            "POST", "/api/pages/counter/actions", port: port, session: session, body: ["action": "add", "value": 2],
            headers: ["Idempotency-Key": "first"])
        #expect(keyed.status == 200)
        for _ in 0..<1_000 {
            let done = try await exchange("POST", "/api/pages/counter/actions", port: port, session: session, body: ["action": "increment"])
            #expect(done.status == 200)
        }
        let before = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(before.body["view"] == ["count": 1_002])
        // 1,002 records with the start: compacted at 500 and at 1,000 (the default SNAPSHOT_AFTER_RECORDS).
        let stored = try await waitForSnapshot(of: session, in: store, through: 1_000)
        #expect(stored.records.count < 10)
        let metrics = String(decoding: try await exchange("GET", "/metrics", port: port).raw, as: UTF8.self)
        #expect(metrics.contains("mvvmr_session_compactions_total 2"))
        server.stop()
        store.close()

        store = try file.open()
        server = try TestServer(port: port, store: store, units: [.restorableCounter], root: .restorableCounter)
        defer { server.stop() }
        let after = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(after.status == 200)
        #expect(after.body["view"] == before.body["view"])
        #expect(after.body["rev"] == before.body["rev"])
        #expect(after.body["seq"] == before.body["seq"])
        let afterMetrics = String(decoding: try await exchange("GET", "/metrics", port: port).raw, as: UTF8.self)
        #expect(!afterMetrics.contains("mvvmr_session_divergences_total 1"))
        // A retry of the first, keyed action gets its first answer (rev 1), though its record is gone.
        let retried = try await exchange(
            "POST", "/api/pages/counter/actions", port: port, session: session, body: ["action": "add", "value": 2],
            headers: ["Idempotency-Key": "first"])
        #expect(retried.status == 200)
        #expect(retried.raw == keyed.raw)
        #expect(retried.body["rev"]?.intValue == 1)
        let next = try await exchange("POST", "/api/pages/counter/actions", port: port, session: session, body: ["action": "increment"])
        #expect(next.status == 200)
        #expect(next.body["rev"]?.intValue == (before.body["rev"]?.intValue ?? -1) + 1)
        #expect(next.body["seq"]?.intValue == (before.body["seq"]?.intValue ?? -1) + 1)
        let final = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(final.body["view"] == ["count": 1_003])
        // The log endpoint gives the snapshot and the records after it, and the tester replays them.
        let log = try SessionLog(bytes: Array(try await exchange("GET", "/api/session/log", port: port, session: session).raw))
        #expect((log.snapshot?.number ?? 0) >= 1_000)
        let replayed = PageTester.replay(log, registry: UnitRegistry(root: .restorableCounter, units: []))
        #expect(replayed.pages.first?.view == ["count": 1_003])
    }

    @Test func aReleasedPagesRecordsLeaveTheStoreAndAnUntouchedPageDoesNotBlockCompaction() async throws {
        let file = ScratchStoreFile()
        let store = try file.open()
        let compactEarly: (inout ServerConfiguration) -> Void = { $0.snapshotAfterRecords = 6 }
        var server = try TestServer(
            store: store, units: [.restorableCounter, .editor], root: .restorableCounter, configure: compactEarly)
        let port = server.port
        let created = try await exchange("POST", "/api/sessions", port: port, body: [:])
        let session = try #require(created.body["session"]?.stringValue)
        // The editor is pushed and popped (released), then pushed again and left open: nothing reaches it.
        for navigation in ["open", "back", "open"] as [String] {
            let body: JSONValue = navigation == "open" ? ["type": "open", "unit": "editor"] : ["type": "back"]
            #expect(try await exchange("POST", "/api/navigation", port: port, session: session, body: body).status == 200)
        }
        for _ in 0..<4 {
            _ = try await exchange("POST", "/api/pages/counter/actions", port: port, session: session, body: ["action": "increment"])
        }
        let stored = try await waitForSnapshot(of: session, in: store, through: 6)
        // Every record up to the snapshot is gone, the released editor's navigations among them.
        let snapshotNumber = try #require(stored.snapshot?.number)
        #expect(stored.records.allSatisfy { $0.number > snapshotNumber })
        let snapshot = try SessionSnapshot(json: try JSONValue(parsing: try #require(stored.snapshot).body))
        #expect(snapshot.stack.map(\.unit) == ["counter", "editor"])
        #expect(snapshot.pages.map(\.unit).sorted() == ["counter", "editor"])
        #expect(snapshot.pages.first { $0.unit == "editor" }?.restoration == .bindAgain)
        // Records 5 and after are the increments: the counter's saved count is how many the snapshot stands for.
        #expect(snapshot.pages.first { $0.unit == "counter" }?.restoration == .savedStates([.int(snapshotNumber - 4)]))
        let editorBefore = try await exchange("GET", "/api/pages/editor", port: port, session: session)
        server.stop()

        server = try TestServer(
            port: port, store: try file.open(), units: [.restorableCounter, .editor], root: .restorableCounter,
            configure: compactEarly)
        defer { server.stop() }
        let counter = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(counter.body["view"] == ["count": 4])
        #expect(counter.body["navigation"]?["stack"] == ["counter", "editor"])
        let editor = try await exchange("GET", "/api/pages/editor", port: port, session: session)
        #expect(editor.body["view"] == editorBefore.body["view"])
        #expect(editor.body["rev"] == editorBefore.body["rev"])
        // The editor still goes back to the counter.
        let back = try await exchange("POST", "/api/navigation", port: port, session: session, body: ["type": "back"])
        #expect(back.status == 200)
        let afterBack = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(afterBack.body["navigation"]?["stack"] == ["counter"])
    }

    @Test func aSavedStateThatNoLongerGivesTheSnapshotsViewComesBackFreshAndIsCountedAsADivergence() async throws {
        let file = ScratchStoreFile()
        let store = try file.open()
        let compactEarly: (inout ServerConfiguration) -> Void = { $0.snapshotAfterRecords = 5 }
        var server = try TestServer(store: store, units: [.restorableCounter], root: .restorableCounter, configure: compactEarly)
        let port = server.port
        let created = try await exchange("POST", "/api/sessions", port: port, body: [:])
        let session = try #require(created.body["session"]?.stringValue)
        var lastSeq = 0
        for _ in 0..<4 {
            let done = try await exchange("POST", "/api/pages/counter/actions", port: port, session: session, body: ["action": "increment"])
            lastSeq = try #require(done.body["seq"]?.intValue)
        }
        // The start and four increments: the snapshot stands for all of them, so only the snapshot can tell.
        let stored = try await waitForSnapshot(of: session, in: store, through: 5)
        #expect(stored.records.isEmpty)
        let before = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(before.body["view"] == ["count": 4])
        let revisionBefore = try #require(before.body["rev"]?.intValue)
        server.stop()

        server = try TestServer(port: port, store: try file.open(), units: [.driftingCounter], root: .driftingCounter, configure: compactEarly)
        defer { server.stop() }
        let after = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(after.status == 200)
        // Bound fresh, never the drifted 104: its revision goes on, its clients get a snapshot. (Required: reading
        // a stream that never brings the snapshot would wait on its heartbeats.)
        try #require(after.body["view"] == ["count": 0])
        #expect((after.body["rev"]?.intValue ?? 0) > revisionBefore)
        let streamed = try await blockingEvents(port: port, session: session, lastEventID: lastSeq, count: 1)
        #expect(streamed.first?.name == "snapshot")
        #expect(streamed.first?.data["view"] == ["count": 0])
        let metrics = String(decoding: try await exchange("GET", "/metrics", port: port).raw, as: UTF8.self)
        #expect(metrics.contains("mvvmr_session_divergences_total 1"))
    }

    @Test func aPageWithASavedStateIsNotResetByTheRecordCap() async throws {
        let file = ScratchStoreFile()
        let cappedNoCompaction: (inout ServerConfiguration) -> Void = {
            $0.maxPageRecords = 3
            $0.snapshotAfterRecords = 0
        }
        var server = try TestServer(
            store: try file.open(), units: [.restorableCounter], root: .restorableCounter, configure: cappedNoCompaction)
        let port = server.port
        let created = try await exchange("POST", "/api/sessions", port: port, body: [:])
        let session = try #require(created.body["session"]?.stringValue)
        for _ in 0..<5 {
            _ = try await exchange("POST", "/api/pages/counter/actions", port: port, session: session, body: ["action": "increment"])
        }
        let before = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        server.stop()

        server = try TestServer(
            port: port, store: try file.open(), units: [.restorableCounter], root: .restorableCounter,
            configure: cappedNoCompaction)
        defer { server.stop() }
        let after = try await exchange("GET", "/api/pages/counter", port: port, session: session)
        #expect(after.body["view"] == ["count": 5])
        #expect(after.body["rev"] == before.body["rev"])
        let metrics = String(decoding: try await exchange("GET", "/metrics", port: port).raw, as: UTF8.self)
        #expect(!metrics.contains("mvvmr_session_page_resets_total 1"))
        #expect(!metrics.contains("mvvmr_session_compactions_total 1"))
    }
}
