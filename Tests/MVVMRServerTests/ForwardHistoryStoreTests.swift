import JSONPatch
import MVVMR
import Testing

@testable import MVVMRServer

extension UnitCase {
    /// A second echo page, to push over the first.
    static let note = UnitCase("note", view: EchoView.self, viewModel: EchoViewModel.self)
    /// An echo page only a page's flow may reach.
    static let hiddenNote = UnitCase("hidden", view: EchoView.self, viewModel: EchoViewModel.self, entry: .flowOnly)
}

/// The forward list goes through a server session's store: a session restored from what the store kept after a
/// `back` has the page ahead with its state, and a refused navigation leaves no record.
@Suite struct ForwardHistoryStoreTests {
    private static let registry = UnitRegistry(root: .echo, units: [.echo, .note, .hiddenNote])

    /// The session's log as the store keeps it, read back as a restore reads it.
    private func storedRecords(of session: ServerSession, in store: any SessionStore) throws -> [InputRecord] {
        session.waitUntilStored(session.pages.inputNumber)
        store.flush()
        let stored = try #require(try store.load(session.identifier))
        return try stored.records.map { try InputRecord(json: JSONValue(parsing: $0.body)) }
    }

    @Test(arguments: [StoreKind.memory, .sqlite])
    func aSessionRestoredAfterBackGoesForwardToThePageAsItWas(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        defer { fixture.tearDown() }
        let live = ServerSession(
            identifier: SessionIdentifier.generate(), registry: Self.registry, services: Services(), store: fixture.store)
        try live.pages.start()
        try live.pages.navigate(.open("note"))
        try live.pages.perform("text", value: "kept", on: "note")
        try live.pages.navigate(.back)
        let records = try storedRecords(of: live, in: fixture.store)
        #expect(records.last?.input == .navigate(.back))

        let restored = ServerSession(
            identifier: live.identifier,
            environment: SessionEnvironment(
                registry: Self.registry, services: Services(), limits: SessionLimits(), store: fixture.store),
            restoring: true)
        let report = restored.restore(records: records)
        #expect(report.divergedUnits.isEmpty)
        #expect(restored.pages.navigation == NavigationState(stack: ["echo"], presented: nil, forward: ["note"]))
        #expect(restored.pages.sequence == live.pages.sequence)
        restored.startLogging(storedThrough: records.last?.number ?? 0)
        restored.pages.goLive()
        let forward = try restored.pages.navigate(.forward)
        #expect(forward.navigation?.kind == .forward)
        #expect(forward.navigation?.page.view == ["text": "kept"])
        #expect(forward.navigation?.page.rev == 1)
        // The forward input is stored after the restored log, as any other.
        #expect(try storedRecords(of: restored, in: fixture.store).last?.input == .navigate(.forward))
        live.pages.releaseAll()
        restored.pages.releaseAll()
    }

    @Test func refusedNavigationsLeaveNoRecordInTheStore() throws {
        let fixture = try StoreFixture(.memory)
        defer { fixture.tearDown() }
        let session = ServerSession(
            identifier: SessionIdentifier.generate(), registry: Self.registry, services: Services(), store: fixture.store)
        try session.pages.start()
        let before = try storedRecords(of: session, in: fixture.store)
        let nothing = #expect(throws: PageError.self) { try session.pages.navigate(.forward) }
        #expect(ProtocolError(try #require(nothing)).status == 409)
        let refused = #expect(throws: PageError.self) { try session.pages.navigate(.open("hidden")) }
        #expect(ProtocolError(try #require(refused)).status == 403)
        let read = #expect(throws: PageError.self) { try session.pages.read("hidden", asDeepLink: true) }
        #expect(read?.code == .entryRefused)
        #expect(try storedRecords(of: session, in: fixture.store) == before)
        session.pages.releaseAll()
    }
}
