import JSONPatch
import MVVMR
import Testing

/// The forward list in a session snapshot's JSON: written only when there is one, read back exactly, and a
/// snapshot without it (as written before it existed) reads as an empty list.
@Suite struct SnapshotForwardListTests {
    private func snapshot(forward: [SessionSnapshot.StackEntry]) -> SessionSnapshot {
        SessionSnapshot(
            number: 4, time: .seconds(2), sequence: 7, seed: 9, wallClock: .zero, bindCount: 3, nextOrdinal: 0,
            stack: [SessionSnapshot.StackEntry(unit: "home", presented: false)], forward: forward,
            pages: [], revisions: [:], annotation: nil)
    }

    @Test func aForwardListRoundTripsThroughTheSnapshotsJSON() throws {
        let taken = snapshot(forward: [
            SessionSnapshot.StackEntry(unit: "settings", presented: true),
            SessionSnapshot.StackEntry(unit: "counters", presented: false),
        ])
        #expect(taken.json["forward"] == [["unit": "settings", "presented": true], ["unit": "counters", "presented": false]])
        #expect(try SessionSnapshot(json: JSONValue(parsing: taken.json.jsonBytes)) == taken)
    }

    @Test func anEmptyForwardListIsNotWrittenAndAnAbsentOneReadsAsEmpty() throws {
        let taken = snapshot(forward: [])
        #expect(taken.json["forward"] == nil)
        #expect(try SessionSnapshot(json: taken.json).forward == [])
    }

    @Test func aMalformedForwardEntryIsAFormatError() throws {
        guard case .object(var object) = snapshot(forward: []).json else {
            Issue.record("a snapshot's JSON is an object")
            return
        }
        object["forward"] = [["presented": true]]
        #expect(throws: InputRecordFormatError.self) { try SessionSnapshot(json: .object(object)) }
    }
}
