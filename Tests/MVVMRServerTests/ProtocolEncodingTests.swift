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
}
