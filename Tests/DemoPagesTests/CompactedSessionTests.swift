@testable import DemoPages
import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

/// The demo's pages that opt in to saved states come back from a session snapshot exactly as replaying their
/// whole log would bring them back.
@Suite struct CompactedSessionTests {
    /// A session on a virtual clock at the counters page, with its records collected.
    private func countersSession() throws -> (PageSession, RecordedInputs) {
        let session = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
        let recorded = RecordedInputs()
        session.setRecorder { record, _ in recorded.append(record) }
        try session.start(at: .counters)
        return (session, recorded)
    }

    @Test func aCountersSessionRestoredFromItsSnapshotGoesOnLikeOneReplayedFromItsWholeLog() async throws {
        let (live, recorded) = try countersSession()
        for step in 0..<1_000 { try live.perform("increment", value: .int(step % 10 + 1), on: "counters") }
        try live.perform("loadMore", on: "counters")
        // A page is loading: its job is in flight, so the session cannot be written down yet.
        #expect(live.takeSnapshot() == nil)
        await live.runPendingWork()
        let snapshot = try #require(live.takeSnapshot(annotation: ["server": "note"]))
        #expect(snapshot.number == live.inputNumber)
        #expect(snapshot.annotation == ["server": "note"])
        // Written and read back in its JSON format, as a store keeps it.
        let stored = try SessionSnapshot(json: try JSONValue(parsing: snapshot.json.jsonBytes))
        #expect(stored == snapshot)

        let fromSnapshot = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
        let report = fromSnapshot.restore(from: stored, records: [])
        #expect(report.divergedUnits.isEmpty)
        let fromLog = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
        #expect(fromLog.restore(from: recorded.records).divergedUnits.isEmpty)
        #expect(fromSnapshot.pages == live.pages)
        #expect(fromSnapshot.pages == fromLog.pages)
        #expect(fromSnapshot.sequence == live.sequence)
        #expect(fromSnapshot.inputNumber == live.inputNumber)
        #expect(fromSnapshot.navigation == live.navigation)
        let next = try fromSnapshot.perform("increment", value: 12, on: "counters")
        let expected = try fromLog.perform("increment", value: 12, on: "counters")
        #expect(next.patch == expected.patch)
        #expect(next.rev == expected.rev)
        #expect(next.sequence == expected.sequence)
    }

    @Test func aPageWithoutASavedStateThatReceivedAnActionBlocksTheSnapshot() throws {
        let session = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
        try session.start(at: .login)
        #expect(session.takeSnapshot() != nil)
        try session.perform("username", value: "david", on: "login")
        // The login page does not opt in: its state lives only in its records.
        #expect(session.takeSnapshot() == nil)
    }
}

/// The records a session hands its recorder, collected (only touched from inside the session's lock).
final class RecordedInputs: @unchecked Sendable {
    // @unchecked: appended only by the recorder, which runs inside the session's lock; read after the session is idle.
    private(set) var records: [InputRecord] = []
    func append(_ record: InputRecord) { records.append(record) }
}
