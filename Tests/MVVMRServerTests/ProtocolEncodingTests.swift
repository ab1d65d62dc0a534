import JSONPatch
@testable import MVVMR
import MVVMRProtocol
import MicroHTTP
import Testing

@testable import MVVMRServer

@Suite struct ProtocolEncodingTests {
    private static let actions = [
        ActionDescriptor(name: "increment", valueType: .int), ActionDescriptor(name: "reset", valueType: .none),
    ]

    /// Page reads write their body from the view's text the session keeps: the same text as the snapshot message
    /// written from the page's values, which reads back as that page.
    @Test(arguments: [
        PageRead(
            snapshot: PageSnapshot(unit: "greeting", rev: 0, view: ["greeting": "Say hello to who?"], actions: []),
            sequence: 1, navigation: NavigationState(stack: ["greeting"], presented: nil)),
        PageRead(
            snapshot: PageSnapshot(
                unit: "counters \"quoted\"\n", rev: 12_345,
                view: ["rows": [["id": 1, "title": "Row 1", "count": -3], ["id": 2.5, "title": "é\u{1}", "count": nil]], "ok": true],
                actions: actions),
            sequence: 987_654_321, navigation: NavigationState(stack: ["home", "counters", "settings"], presented: "settings")),
        PageRead(
            snapshot: PageSnapshot(unit: "empty", rev: 3, view: [:], actions: actions),
            sequence: 0, navigation: NavigationState(stack: [], presented: nil)),
        PageRead(
            snapshot: PageSnapshot(unit: "home", rev: 1, view: [:], actions: []),
            sequence: 9, navigation: NavigationState(stack: ["home"], presented: nil, forward: ["counters", "q\"uote"])),
    ])
    func pageReadBodyIsTheSnapshotMessage(read: PageRead) throws {
        let session = "s_0123456789abcdef\\\""
        let message = read.snapshot.wire(session: session, sequence: read.sequence, navigation: read.navigation)
        let written = read.body(session: session, encodedActions: WireAction.encodedList(read.snapshot.actions.map(\.wire)))
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: message.jsonBytes, as: UTF8.self))
        let decoded = try WireSnapshot(parsing: written)
        #expect(decoded.page.view == read.snapshot.view)
        #expect(decoded.page.actions.map(\.name) == read.snapshot.actions.map(\.name))
        #expect(decoded.navigation.stack == read.navigation.stack)
        #expect(decoded.navigation.forward == read.navigation.forward)
        #expect(decoded.seq == read.sequence)
    }

    /// An action's result becomes the response the client reads: its patch, or its snapshot, its navigation and a
    /// refused navigation; and a patch event's frame reads back as the same patch.
    @Test func actionResultsAndPatchEventsReadBackAsWhatTheSessionProduced() throws {
        let patch = JSONPatch([
            .replace(path: JSONPointer(tokens: ["rows", "3", "count"]), value: 4),
            .add(path: JSONPointer(tokens: ["rows", "-"]), value: ["id": 11, "title": "Row \"11\"", "count": 0]),
            .move(from: JSONPointer(tokens: ["rows", "0"]), path: JSONPointer(tokens: ["rows", "5"])),
            .remove(path: JSONPointer(tokens: ["a/b", "~c"])),
        ])
        for operations in [[], Array(patch.operations.prefix(1)), patch.operations] {
            let result = ActionResult(
                unit: "counters", rev: 7, sequence: 42, patch: JSONPatch(operations), snapshot: nil,
                navigation: nil, navigationFailure: nil, events: [])
            let answer = try WireActionResponse(parsing: result.responseBody)
            #expect(answer == WireActionResponse(unit: "counters", rev: 7, seq: 42, change: .patch(JSONPatch(operations))))
            #expect(result.responseBody == result.wire.jsonBytes)
            let event = SessionEvent(sequence: 42, kind: .patch(PagePatch(unit: "counters", rev: 7, patch: JSONPatch(operations))))
            let text = String(decoding: event.frame, as: UTF8.self)
            #expect(text.hasPrefix("id: 42\nevent: patch\ndata: "))
            let data = text.dropFirst("id: 42\nevent: patch\ndata: ".count).dropLast(2)
            #expect(try WireEvent.decode(name: "patch", data: Array(data.utf8)) == .patch(WirePatchEvent(unit: "counters", rev: 7, patch: JSONPatch(operations))))
        }
        let page = PageSnapshot(unit: "main", rev: 1, view: ["user": "ann"], actions: Self.actions)
        let navigation = Navigation(
            kind: .push, state: NavigationState(stack: ["login", "main"], presented: nil), page: page)
        let navigated = ActionResult(
            unit: "login", rev: 2, sequence: 5, patch: nil, snapshot: page, navigation: navigation,
            navigationFailure: PageError.entryRefused("settings"), events: [])
        let answer = try WireActionResponse(parsing: navigated.responseBody)
        #expect(answer.change == .snapshot(WirePage(unit: "main", rev: 1, view: ["user": "ann"], actions: Self.actions.map(\.wire))))
        #expect(answer.navigation?.kind.rawValue == "push")
        #expect(answer.navigation?.state.stack == ["login", "main"])
        #expect(answer.navigationError?.code == "entry_refused")
        #expect(answer.navigationError?.unit == "settings")
    }

    /// Every navigation state on the wire carries `forward`, nearest first, empty when there is none.
    @Test func navigationStatesAndNavigationsCarryTheForwardList() throws {
        let empty = try JSONValue(parsing: NavigationState(stack: ["home"], presented: nil).wire.jsonBytes)
        #expect(empty == ["stack": ["home"], "presented": nil, "forward": []])
        let state = NavigationState(stack: ["home", "counters"], presented: nil, forward: ["login", "main"])
        let navigation = Navigation(
            kind: .forward, state: state,
            page: PageSnapshot(unit: "counters", rev: 2, view: ["n": 2], actions: []))
        let encoded = try JSONValue(parsing: navigation.wire.jsonBytes)
        #expect(encoded["type"] == "forward")
        #expect(encoded["forward"] == ["login", "main"])
        #expect(encoded["stack"] == ["home", "counters"])
        #expect(encoded["page"]?["rev"] == 2)
    }

    /// The refusals of this feature have their stable codes, statuses and details.
    @Test func entryAndForwardRefusalsMapToTheirStatuses() throws {
        let refused = ProtocolError(PageError.entryRefused("main"))
        #expect(refused.status == 403)
        #expect(refused.code == "entry_refused")
        #expect(refused.details == ["unit": "main"])
        let nothing = ProtocolError(PageError(.nothingForward, "no"))
        #expect(nothing.status == 409)
        #expect(nothing.code == "nothing_forward")
        #expect(try JSONValue(parsing: PageError.entryRefused("main").wireNavigationError.jsonBytes)["details"] == ["unit": "main"])
    }

    /// MicroHTTP writes error bodies itself (it answers some before any route, and knows nothing of the protocol's
    /// module); each reads as the protocol's error message, the one the client decodes.
    @Test func errorBodiesReadAsTheProtocolsErrorMessage() throws {
        let errors = [
            ProtocolError(PageError(.unknownAction, "No \"jump\".\n", allowed: ["increment", "re\"set"])).httpError,
            ProtocolError.unknownSession.httpError, HTTPError.notFound,
        ]
        for error in errors {
            guard case .bytes(let body) = error.response.body else {
                Issue.record("\(error.code): not a byte body")
                continue
            }
            let decoded = try WireErrorBody(parsing: body)
            #expect(decoded.code == error.code)
            #expect(decoded.message == error.message)
            #expect(decoded.details == (try error.detailsJSON.map { try JSONValue(parsing: $0) }))
        }
    }

    /// `GET /api/units` says how each unit may be entered.
    @Test func theUnitsDocumentListsEachUnitsEntryRule() {
        let flowOnly = UnitCase("hidden", view: EmptyTestView.self, viewModel: EmptyTestViewModel.self, entry: .flowOnly)
        let open = UnitCase("open", view: EmptyTestView.self, viewModel: EmptyTestViewModel.self)
        let document = PageServer.unitsDocument(UnitRegistry(root: open, units: [flowOnly]))
        #expect(document.units.map(\.entry) == ["deep_link", "flow_only"])
    }

    /// The OpenAPI document's protocol components are the messages' own schemas, with this server's units in them.
    @Test func theOpenAPIComponentsAreTheMessagesOwnSchemas() throws {
        let open = UnitCase("open", view: EmptyTestView.self, viewModel: EmptyTestViewModel.self)
        let registry = UnitRegistry(root: open, units: [])
        let components = try #require(OpenAPIDocument.make(registry: registry)["components"]?["schemas"]?.objectValue)
        let context = WireSchemaContext(unitNames: registry.units.map(\.name), entryNames: ["deep_link", "flow_only"])
        for component in WireComponents.all {
            #expect(components[component.componentName] == component.schema(in: context), "\(component.componentName)")
        }
        #expect(components["NewSession"]?["properties"]?["unit"]?["enum"] == ["open"])
    }
}

struct EmptyTestView: View {}
final class EmptyTestViewModel: ViewModel {
    init(context: UnitContext) {}
}
