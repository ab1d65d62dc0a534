@testable import DemoPages
import JSONPatch
import MVVMR
import Testing

/// A page waiting in the forward list comes back, state intact, in a session restored from its snapshot or from
/// its log, and the demo's flow-only pages are reached by their flow only.
@Suite struct ForwardRestoreTests {
    /// home → counters (the client opened it), row 3 incremented twice, then back.
    private func countedThenBack() throws -> (PageSession, RecordedInputs) {
        let session = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
        let recorded = RecordedInputs()
        session.setRecorder { record, _ in recorded.append(record) }
        try session.start()
        try session.navigate(.open("counters"))
        try session.perform("increment", value: 3, on: "counters")
        try session.perform("increment", value: 3, on: "counters")
        try session.navigate(.back)
        return (session, recorded)
    }

    private func rowThree(_ navigation: Navigation?) -> JSONValue? {
        navigation?.page.view["rows"]?[2]?["count"]
    }

    @Test func aSnapshotTakenAfterBackRestoresTheForwardPageWithItsState() throws {
        let (live, _) = try countedThenBack()
        let snapshot = try #require(live.takeSnapshot())
        #expect(snapshot.forward == [SessionSnapshot.StackEntry(unit: "counters", presented: false)])
        let stored = try SessionSnapshot(json: try JSONValue(parsing: snapshot.json.jsonBytes))
        #expect(stored == snapshot)

        let restored = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
        let report = restored.restore(from: stored, records: [])
        #expect(report.divergedUnits.isEmpty)
        #expect(restored.navigation == NavigationState(stack: ["home"], presented: nil, forward: ["counters"]))
        #expect(restored.pages == live.pages)
        let forward = try restored.navigate(.forward)
        #expect(forward.navigation?.kind == .forward)
        #expect(rowThree(forward.navigation) == 2)
        #expect(forward.navigation == (try live.navigate(.forward)).navigation)
    }

    @Test func aLogReplayedAfterBackRestoresTheForwardPageWithItsState() throws {
        let (live, recorded) = try countedThenBack()
        let restored = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
        let report = restored.restore(from: recorded.records)
        #expect(report.mismatchedRecords.isEmpty)
        #expect(restored.navigation.forward == ["counters"])
        let forward = try restored.navigate(.forward)
        #expect(rowThree(forward.navigation) == 2)
        #expect(forward.sequence == (try live.navigate(.forward)).sequence)
    }

    @Test func signingInThenBackThenForwardStillGreetsTheUser() async throws {
        let session = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
        try session.start(at: .login)
        try session.perform("username", value: "david", on: "login")
        try session.perform("password", value: "blaine123", on: "login")
        try session.perform("submit", on: "login")
        await session.runPendingWork()
        #expect(session.navigation.stack == ["login", "main"])
        try session.navigate(.back)
        let forward = try session.navigate(.forward)
        #expect(forward.navigation?.page.view["welcome"] == "Welcome, david")
    }

    @Test func mainAndSettingsAreFlowOnly() throws {
        #expect(UnitCase.main.entry == .flowOnly)
        #expect(UnitCase.settings.entry == .flowOnly)
        #expect(DemoApp.units.filter { $0.entry == .flowOnly }.map(\.name) == ["main", "settings"])
        let session = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
        try session.start()
        for unit in ["main", "settings"] {
            let opened = #expect(throws: PageError.self) { try session.navigate(.open(unit)) }
            #expect(opened?.code == .entryRefused)
            let read = #expect(throws: PageError.self) { try session.read(unit, asDeepLink: true) }
            #expect(read?.code == .entryRefused)
        }
        #expect(session.pages.map(\.unit) == ["home"])
    }
}
