import JSONPatch
@testable import MVVMR
import Testing

@testable import MVVMRServer

@Suite struct ProtocolEncodingTests {
    private static let actions = [
        ActionDescriptor(name: "increment", valueType: .int), ActionDescriptor(name: "reset", valueType: .none),
    ]

    /// Page reads write their body straight to bytes; it must be the very text the JSON tree gives.
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
    func pageReadBodyMatchesTheEncodedSnapshot(read: PageRead) throws {
        let session = "s_0123456789abcdef\\\""
        let expected = ProtocolEncoding.snapshot(
            read.snapshot, session: session, sequence: read.sequence, navigation: read.navigation
        ).jsonBytes
        let written = ProtocolEncoding.snapshotBody(
            read, session: session, encodedActions: ProtocolEncoding.actions(read.snapshot.actions).jsonBytes)
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        #expect(try JSONValue(parsing: written) == JSONValue(parsing: expected))
    }

    /// Action responses and patch frames are written straight to bytes too; the same text as the tree's.
    @Test func actionBodiesAndPatchFramesMatchTheEncodedTrees() throws {
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
            #expect(
                String(decoding: ProtocolEncoding.actionResultBody(result), as: UTF8.self)
                    == String(decoding: ProtocolEncoding.actionResult(result).jsonBytes, as: UTF8.self))
            let event = SessionEvent(sequence: 42, kind: .patch(PagePatch(unit: "counters", rev: 7, patch: JSONPatch(operations))))
            let framed = ProtocolEncoding.frame(name: "patch", sequence: 42, data: ProtocolEncoding.patchEvent(PagePatch(unit: "counters", rev: 7, patch: JSONPatch(operations))))
            #expect(String(decoding: ProtocolEncoding.frame(event), as: UTF8.self) == String(decoding: framed, as: UTF8.self))
        }
    }

    /// Every navigation state on the wire carries `forward`, nearest first, empty when there is none.
    @Test func navigationStatesAndNavigationsCarryTheForwardList() {
        let empty = ProtocolEncoding.navigationState(NavigationState(stack: ["home"], presented: nil))
        #expect(empty == ["stack": ["home"], "presented": nil, "forward": []])
        let state = NavigationState(stack: ["home", "counters"], presented: nil, forward: ["login", "main"])
        let navigation = Navigation(
            kind: .forward, unit: "counters", state: state,
            page: PageSnapshot(unit: "counters", rev: 2, view: ["n": 2], actions: []))
        let encoded = ProtocolEncoding.navigation(navigation)
        #expect(encoded["type"] == "forward")
        #expect(encoded["forward"] == ["login", "main"])
        #expect(encoded["stack"] == ["home", "counters"])
        #expect(encoded["page"]?["rev"] == 2)
    }

    /// The refusals of this feature have their stable codes, statuses and details.
    @Test func entryAndForwardRefusalsMapToTheirStatuses() {
        let refused = ProtocolError(PageError.entryRefused("main"))
        #expect(refused.status == 403)
        #expect(refused.code == "entry_refused")
        #expect(refused.details == ["unit": "main"])
        let nothing = ProtocolError(PageError(.nothingForward, "no"))
        #expect(nothing.status == 409)
        #expect(nothing.code == "nothing_forward")
        #expect(ProtocolEncoding.navigationError(PageError.entryRefused("main"))["details"] == ["unit": "main"])
    }

    /// `GET /api/units` says how each unit may be entered.
    @Test func theUnitsDocumentListsEachUnitsEntryRule() {
        let flowOnly = UnitCase("hidden", view: EmptyTestView.self, viewModel: EmptyTestViewModel.self, entry: .flowOnly)
        let open = UnitCase("open", view: EmptyTestView.self, viewModel: EmptyTestViewModel.self)
        let document = PageServer.unitsDocument(UnitRegistry(root: open, units: [flowOnly]))
        #expect(document["units"]?[0]?["entry"] == "deep_link")
        #expect(document["units"]?[1]?["entry"] == "flow_only")
    }
}

struct EmptyTestView: View {}
final class EmptyTestViewModel: ViewModel {
    init(context: UnitContext) {}
}
