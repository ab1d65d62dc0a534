import JSONPatch
import MVVMR
import Testing

/// A unit that only a page's flow reaches: refused on every deep-link path, reached by the flow and by going back
/// to it.
@Suite struct EntryRuleTests {
    /// The examples' editor, flow-only: main pushes it.
    static let flowOnlyEditor = UnitCase(
        "editor", view: EditorView.self, viewModel: EditorViewModel.self, entry: .flowOnly)

    private func makeFlowSession() -> PageSession {
        PageSession(
            registry: UnitRegistry(root: .login, units: [.main, Self.flowOnlyEditor, .counter]),
            services: exampleServices(), clock: .virtual)
    }

    @Test func unitsSayHowTheyMayBeEntered() {
        #expect(UnitCase.counter.entry == .deepLink)
        #expect(Self.flowOnlyEditor.entry == .flowOnly)
        #expect(UnitEntry.flowOnly.rawValue == "flow_only")
        #expect(UnitEntry.deepLink.rawValue == "deep_link")
    }

    @Test func openThatWouldPushAFlowOnlyUnitIsRefusedAndRecordsNothing() throws {
        let session = makeFlowSession()
        try session.start()
        let before = (session.sequence, session.inputNumber, session.navigation)
        let refused = #expect(throws: PageError.self) { try session.navigate(.open("editor")) }
        #expect(refused?.code == .entryRefused)
        #expect(refused?.unit == "editor")
        #expect(session.sequence == before.0)
        #expect(session.inputNumber == before.1)
        #expect(session.navigation == before.2)
        #expect(session.pages.map(\.unit) == ["login"])
    }

    @Test func aDeepLinkReadOfAFlowOnlyUnitIsRefusedUnlessItIsBound() throws {
        let session = makeFlowSession()
        try session.start()
        try session.perform("login", value: "ann", on: "login")
        let refused = #expect(throws: PageError.self) { try session.read("editor", asDeepLink: true) }
        #expect(refused?.code == .entryRefused)
        #expect(!session.pages.map(\.unit).contains("editor"))
        // The flow reaches it: main pushes the editor; then a read of the bound page is served.
        try session.perform("edit", on: "main")
        #expect(try session.read("editor", asDeepLink: true).snapshot.unit == "editor")
        // Going back to it is no deep link: back, then open goes forward to it.
        try session.navigate(.back)
        #expect(try session.read("editor", asDeepLink: true).snapshot.view["original"] == "ann")
        let returned = try session.navigate(.open("editor"))
        #expect(returned.navigation?.kind == .forward)
        // Open that pops back to it on the stack is no deep link either.
        try session.navigate(.open("counter"))
        #expect(try session.navigate(.open("editor")).navigation?.kind == .back)
    }

    @Test func aReadThatIsNoDeepLinkBindsAFlowOnlyUnit() throws {
        // A test (or the app itself) may still bind it: only deep links are refused.
        let session = makeFlowSession()
        try session.start()
        #expect(try session.read("editor").snapshot.unit == "editor")
    }
}
