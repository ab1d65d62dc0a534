import JSONPatch
import MVVMR
import Synchronization
import Testing

/// Which inputs a session records, and that each record carries the events its result carries.
@Suite struct InputRecordingTests {
    /// Keeps what a session's recorder receives.
    final class Recorded: Sendable {
        private let entries = Mutex<[(record: InputRecord, events: [SessionEvent])]>([])
        var records: [InputRecord] { entries.withLock { $0.map(\.record) } }
        var events: [[SessionEvent]] { entries.withLock { $0.map(\.events) } }
        func append(_ record: InputRecord, _ events: [SessionEvent]) {
            entries.withLock { $0.append((record, events)) }
        }
    }

    private func makeRecordedSession() -> (PageSession, Recorded) {
        let (session, _) = makeSession(root: .dashboard)
        let recorded = Recorded()
        session.setRecorder { record, events in recorded.append(record, events) }
        return (session, recorded)
    }

    @Test func eachInputThatChangesTheSessionIsOneNumberedRecordWithTheEventsOfItsResult() throws {
        let (session, recorded) = makeRecordedSession()
        let start = try session.start()
        let read = try session.read("counter")
        _ = try session.read("counter")
        let action = try session.perform("refresh", on: "dashboard", annotation: ["key": "k1"])
        session.advanceTime(by: .seconds(1))
        let rebound = try session.rebind("counter")

        #expect(recorded.records.map(\.number) == [1, 2, 3, 4, 5])
        #expect(start.inputNumber == 1)
        #expect(read.inputNumber == 2)
        #expect(action.inputNumber == 3)
        #expect(rebound == 5)
        #expect(session.inputNumber == 5)
        let inputs = recorded.records.map(\.input)
        #expect(inputs[1] == .bind(unit: "counter", parameters: [:]))
        #expect(inputs[2] == .action(unit: "dashboard", name: "refresh", value: .null, clientRevision: nil))
        #expect(inputs[3] == .timer(0))
        #expect(inputs[4] == .rebind(unit: "counter", revision: 1))
        #expect(recorded.records.map(\.annotation) == [nil, nil, ["key": "k1"], nil, nil])
        #expect(recorded.events[0] == start.events)
        #expect(recorded.events[2] == action.events)
        #expect(recorded.records.map(\.sequence) == [1, 2, 3, 4, 5])
    }

    @Test func anInputThatFailsBeforeItChangesAnythingIsNotRecorded() throws {
        let (session, recorded) = makeRecordedSession()
        try session.start()
        #expect(throws: PageError.self) { try session.snapshot(of: "throwing") }
        #expect(throws: PageError.self) { try session.navigate(.open("throwing", parameters: [:])) }
        #expect(throws: PageError.self) { try session.perform("nothing", on: "dashboard") }
        #expect(recorded.records.count == 1)
        #expect(session.inputNumber == 1)
        let result = try session.perform("refresh", on: "dashboard")
        #expect(result.inputNumber == 2)
        #expect(recorded.records.map(\.number) == [1, 2])
    }

    @Test func aStepLeavesNoTurnBehindSoTheSessionCanBeSnapshotAfterIt() throws {
        let (session, _) = makeRecordedSession()
        try session.start(at: .counter)
        try session.perform("increment", on: "counter")
        #expect(throws: PageError.self) { try session.snapshot(of: "throwing") }
        // A snapshot is refused inside a turn; after a failed input the session is idle again, so only the
        // counter's lack of a saved state (it was reached by an action) can refuse it here.
        #expect(session.takeSnapshot(recordCap: 0) != nil)
    }
}
