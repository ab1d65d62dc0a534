import JSONPatch
import MVVMR
import Testing

@testable import MVVMRServer

// The OpenAPI document's per-unit components: `<Unit>View`, the unit's view schema derived from its state type
// (`{}` when the View binds path by path), and `<Unit>Actions`, one branch per action, which each unit's own
// actions operation references.

/// A whole Codable state: its schema is the unit's view.
struct MemoBoardState: Codable, Equatable, Sendable {
    var title = "Memos"
    var count = 0
    var pinned: String?
    var tags: [String] = []
}

/// A memo typed into a form: an action value of a `Decodable` type.
struct NewMemo: Codable, Equatable, Sendable {
    var text: String
    var urgent: Bool?
}

enum MemoBoardAction: String, PageAction { case bump, add, clear }

enum MemoBoardEvent: Sendable { case bump(Int), add(NewMemo), clear }

struct MemoBoardView: View {
    typealias Output = StateOutput<MemoBoardState>
    func input(from actions: Actions<MemoBoardAction>) -> Signal<MemoBoardEvent> {
        .merge(
            actions.signal(.bump, of: Int.self).map(MemoBoardEvent.bump),
            actions.signal(.add, of: NewMemo.self).map(MemoBoardEvent.add),
            actions.signal(.clear).map { MemoBoardEvent.clear })
    }
}

final class MemoBoardViewModel: ReducerViewModel {
    let reducer: StateReducer<MemoBoardState, MemoBoardEvent>
    init(context: UnitContext, state: MemoBoardState?) throws { reducer = StateReducer(state ?? MemoBoardState()) }

    func transform(_ events: Signal<MemoBoardEvent>) -> StateOutput<MemoBoardState> {
        reducer.run(events) { state, event in
            switch event {
            case .bump(let by): state.count += by
            case .add(let memo): state.tags.append(memo.text)
            case .clear: state.tags = []
            }
        }
    }
}

/// A View that binds path by path: nothing says what its view holds.
struct MemoLabelOutput { let text: Driver<String> }

struct MemoLabelView: View {
    typealias Output = MemoLabelOutput
    func bind(_ output: MemoLabelOutput, to page: Page) { page.bind(output.text, at: "/text") }
}

final class MemoLabelViewModel: ViewModel {
    typealias Output = MemoLabelOutput
    init(context: UnitContext) throws {}
    func transform(_ input: NoInput) -> MemoLabelOutput { MemoLabelOutput(text: .just("Memo")) }
}

/// A page of its own nothing, with the memo board as a part at `/memos`.
struct MemoDeskView: View {}

final class MemoDeskViewModel: ViewModel {
    init(context: UnitContext) throws {}
}

extension UnitCase {
    static let memoBoard = UnitCase("memoBoard", view: MemoBoardView.self, viewModel: MemoBoardViewModel.self)
    static let memoLabel = UnitCase("memoLabel", view: MemoLabelView.self, viewModel: MemoLabelViewModel.self)
    static let memoDesk = UnitCase(
        "memoDesk", view: MemoDeskView.self, viewModel: MemoDeskViewModel.self, parts: [UnitPart("memos", .memoBoard)])
}

@Suite struct UnitSchemaComponentsTests {
    private let document = OpenAPIDocument.make(
        registry: UnitRegistry(root: .memoLabel, units: [.memoBoard, .memoDesk]))

    private func component(_ name: String) -> JSONValue? { document["components"]?["schemas"]?[name] }

    /// `schema` without its `description`.
    private func undescribed(_ schema: JSONValue?) -> JSONValue? {
        guard var object = schema?.objectValue else { return nil }
        object["description"] = nil
        return .object(object)
    }

    private static let memoBoardSchema: JSONValue = [
        "type": "object",
        "properties": [
            "title": ["type": "string"], "count": ["type": "integer"], "pinned": ["type": ["string", "null"]],
            "tags": ["type": "array", "items": ["type": "string"]],
        ],
        "required": ["title", "count", "tags"],
    ]

    @Test func aCodableStatesUnitHasItsDerivedSchemaAsItsView() throws {
        let view = try #require(component("MemoBoardView"))
        #expect(undescribed(view) == Self.memoBoardSchema)
        #expect(undescribed(view) == UnitCase.memoBoard.viewSchema)
        let description = try #require(view["description"]?.stringValue)
        #expect(description.contains("`memoBoard`"))
        #expect(description.contains("Derived from the declared state types"))
        #expect(!description.contains("Not described"))
    }

    @Test func aPathByPathUnitsViewIsTheEmptySchemaSayingSo() throws {
        let view = try #require(component("MemoLabelView")?.objectValue)
        #expect(UnitCase.memoLabel.viewSchema == [:])
        #expect(view.keys == ["description"])
        let description = try #require(view["description"]?.stringValue)
        #expect(description.contains("`memoLabel`"))
        #expect(description.contains("Not described: the View binds path by path"))
    }

    @Test func aPartsSchemaIsPlacedAtItsMountPath() throws {
        let view = try #require(component("MemoDeskView"))
        #expect(
            undescribed(view) == [
                "type": "object", "properties": ["memos": Self.memoBoardSchema], "required": ["memos"],
            ])
        #expect(view["description"]?.stringValue?.contains("`/memos` (`memos`)") == true)
    }

    @Test func eachActionIsOneBranchWithTheValueTheServerTakes() throws {
        let branches = try #require(component("MemoBoardActions")?["oneOf"]?.arrayValue)
        #expect(branches.map { $0["properties"]?["action"]?["const"] } == ["bump", "add", "clear"])
        func branch(_ name: String) -> JSONValue? {
            branches.first { $0["properties"]?["action"]?["const"] == .string(name) }
        }
        // An int keeps Swift's Int bounds (a whole number beyond them is 422 `invalid_value`).
        #expect(
            branch("bump")?["properties"]?["value"]
                == ["type": "integer", "minimum": .int(Int.min), "maximum": .int(Int.max)])
        #expect(branch("bump")?["required"] == ["action", "value"])
        // A Decodable value: the schema derived from its type.
        #expect(
            branch("add")?["properties"]?["value"]
                == [
                    "type": "object",
                    "properties": ["text": ["type": "string"], "urgent": ["type": ["boolean", "null"]]],
                    "required": ["text"],
                ])
        // No value: absent or null.
        #expect(branch("clear")?["properties"]?["value"] == ["type": "null"])
        #expect(branch("clear")?["required"] == ["action"])
        let revision: JSONValue = ["type": ["integer", "null"], "minimum": 0, "maximum": .int(Int.max)]
        #expect(branch("clear")?["properties"]?["rev"] == revision)

        // A part's actions are the page's, named `part.action`.
        let desk = try #require(component("MemoDeskActions")?["oneOf"]?.arrayValue)
        #expect(desk.map { $0["properties"]?["action"]?["const"] } == ["memos.bump", "memos.add", "memos.clear"])
    }

    @Test func eachUnitsActionsOperationReferencesItsActionsComponent() throws {
        func bodySchema(_ path: String) -> JSONValue? {
            document["paths"]?[path]?["post"]?["requestBody"]?["content"]?["application/json"]?["schema"]
        }
        #expect(bodySchema("/api/pages/memoBoard/actions") == ["$ref": "#/components/schemas/MemoBoardActions"])
        #expect(bodySchema("/api/pages/memoDesk/actions") == ["$ref": "#/components/schemas/MemoDeskActions"])
        // The generic operation takes any action name, as before.
        #expect(bodySchema("/api/pages/{unit}/actions") == ["$ref": "#/components/schemas/ActionRequest"])
        // A unit without actions has no operation of its own, and its component admits no request.
        #expect(document["paths"]?["/api/pages/memoLabel/actions"] == nil)
        #expect(component("MemoLabelActions")?["not"] == [:])
    }

    @Test func componentNamesAreValidAndOnePerUnit() throws {
        let stems = OpenAPIDocument.componentStems(
            of: [
                UnitCase("page", view: MemoLabelView.self, viewModel: MemoLabelViewModel.self),
                UnitCase("memo", view: MemoLabelView.self, viewModel: MemoLabelViewModel.self),
                UnitCase("Memo", view: MemoLabelView.self, viewModel: MemoLabelViewModel.self),
                UnitCase("a-b.c", view: MemoLabelView.self, viewModel: MemoLabelViewModel.self),
                UnitCase("x y/é", view: MemoLabelView.self, viewModel: MemoLabelViewModel.self),
            ], taken: ["PageView"])
        #expect(stems == ["page": "Page_2", "memo": "Memo", "Memo": "Memo_2", "a-b.c": "A-b.c", "x y/é": "X_y__"])

        let names = try #require(document["components"]?["schemas"]?.objectValue?.keys)
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")
        for name in names { #expect(!name.isEmpty && name.allSatisfy(allowed.contains), "\(name)") }
        for unit in ["MemoLabel", "MemoBoard", "MemoDesk"] {
            #expect(names.contains(unit + "View") && names.contains(unit + "Actions"), "\(unit)")
        }
        // The protocol's own components are still there.
        for name in ["ActionRequest", "Snapshot", "Page", "Error"] { #expect(names.contains(name), "\(name)") }
    }
}
