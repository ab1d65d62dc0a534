import JSONPatch
import MVVMR
import Testing

/// Sessions made from one shared ``PageSessionSettings`` (as a server makes all of its own): each keeps its own pages,
/// and each follows the shared history limit and forward limit.
@Suite struct PageSessionSettingsTests {
    private let settings = PageSessionSettings(
        registry: UnitRegistry(root: .counter, units: allExampleUnits), services: exampleServices(), historyLimit: 2,
        forwardLimit: 0)

    @Test func sessionsSharingSettingsKeepTheirOwnPages() throws {
        let first = PageSession(settings: settings, clock: .virtual)
        let second = PageSession(settings: settings, clock: .virtual)
        try first.start()
        try second.start()
        for _ in 0..<3 { try first.perform("increment", on: "counter") }
        try second.perform("increment", on: "counter")
        #expect(first.pages.first { $0.unit == "counter" }?.view[pointer("/count")] == 3)
        #expect(second.pages.first { $0.unit == "counter" }?.view[pointer("/count")] == 1)
    }

    @Test func eachSessionKeepsTheSharedHistoryLimit() throws {
        let session = PageSession(settings: settings, clock: .virtual)
        try session.start()
        for _ in 0..<3 { try session.perform("increment", on: "counter") }
        // Two patches kept: a client at revision 0 is too far behind and gets a snapshot, one at 2 gets patches.
        let behind = try session.perform("increment", on: "counter", clientRevision: 0)
        #expect(behind.patch == nil)
        #expect(behind.snapshot?.rev == 4)
        let recent = try session.perform("increment", on: "counter", clientRevision: 3)
        #expect(recent.patch?.count == 4)
    }

    @Test func aNegativeForwardLimitCountsAsNone() {
        let clamped = PageSessionSettings(
            registry: UnitRegistry(root: .counter, units: allExampleUnits), forwardLimit: -3)
        #expect(clamped.forwardLimit == 0)
        #expect(clamped.historyLimit == 64)
    }
}
