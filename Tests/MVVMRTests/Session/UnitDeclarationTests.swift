import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

// What a unit's declaration tells without a session: its view's JSON Schema (derived from the state type, never
// guessed), its actions' schemas, and the mistakes reported when the app starts.

struct Nested: Codable, Equatable, Sendable {
    var tags: [String]
    var scores: [String: Double]
    var nested: [[Int]]
}

/// An enum with associated values: the derivation cannot read it.
enum Opaque: Codable, Equatable, Sendable { case one(Int), two }

/// A recursive type: described down to the derivation's depth limit, no further.
final class Tree: Codable, @unchecked Sendable {
    var name = ""
    var children: [Tree] = []
}

struct Described: Codable, Equatable, Sendable {
    var count: Int
    var ratio: Double
    var flag: Bool
    var name: String?
    var nested: Nested
    var filter: NotesFilter
    /// Last: the members after one that cannot be described are not listed.
    var opaque: Opaque
}

enum HalfAction: String, PageAction { case declared, forgotten }

struct HalfView: View {
    func input(from actions: Actions<HalfAction>) -> Signal<Void> { actions.signal(.declared) }
}

final class HalfViewModel: ViewModel {
    init(context: UnitContext) {}
    func transform(_ input: Signal<Void>) -> NoOutput { NoOutput() }
}

@Suite struct UnitDeclarationTests {
    @Test func aStructIsDescribedMemberByMember() throws {
        let schema = JSONSchema.of(Described.self).document
        #expect(schema["type"] == "object")
        #expect(schema["required"] == ["count", "ratio", "flag", "nested", "filter", "opaque"])
        let properties = try #require(schema["properties"])
        #expect(properties["count"] == ["type": "integer"])
        #expect(properties["ratio"] == ["type": "number"])
        #expect(properties["flag"] == ["type": "boolean"])
        #expect(properties["name"] == ["type": ["string", "null"]])
        #expect(properties[at: "/nested/properties/tags"] == ["type": "array", "items": ["type": "string"]])
        #expect(properties[at: "/nested/properties/scores"] == ["type": "object", "additionalProperties": ["type": "number"]])
        #expect(
            properties[at: "/nested/properties/nested"]
                == ["type": "array", "items": ["type": "array", "items": ["type": "integer"]]])
        #expect(properties["filter"] == ["type": "string", "enum": ["all", "open", "done"]])
    }

    @Test func whatCannotBeDescribedIsTheEmptySchemaNeverAGuess() {
        #expect(JSONSchema.of(Opaque.self).document == [:])
        #expect(JSONSchema.of(Described.self).document[at: "/properties/opaque"] == [:])
        #expect(JSONSchema.of(JSONValue.self).document == [:])
        // A recursive type is described once: where it meets itself again, `{}` instead of looping.
        let schema = JSONSchema.of(Tree.self).document
        #expect(schema[at: "/properties/name"] == ["type": "string"])
        #expect(schema[at: "/properties/children"] == [:])
    }

    @Test func aUnitsViewSchemaComesFromItsStateWithItsPartsAtTheirPaths() throws {
        let notes = UnitCase.notes.viewSchema
        #expect(notes["type"] == "object")
        #expect(notes[at: "/properties/rows/items/properties/id"] == ["type": "integer"])
        #expect(notes[at: "/properties/selected"] == ["type": ["integer", "null"]])
        let composed = UnitCase("composed", view: NotesView.self, viewModel: NotesViewModel.self, parts: [UnitPart("side", .notes)])
        #expect(composed.viewSchema[at: "/properties/side"] == notes)
        #expect(composed.viewSchema["required"]?.arrayValue?.contains("side") == true)
        // A View bound path by path says nothing it does not know.
        #expect(UnitCase("half", view: HalfView.self, viewModel: HalfViewModel.self).viewSchema == [:])
    }

    @Test func actionsCarryTheSchemaOfTheirDecodableValues() throws {
        let add = try #require(UnitCase.notes.actions.first { $0.name == "add" })
        #expect(add.valueType == .object)
        #expect(add.valueSchema[at: "/properties/text"] == ["type": "string"])
        #expect(add.valueSchema["required"] == ["text"])
        let toggle = try #require(UnitCase.notes.actions.first { $0.name == "toggle" })
        #expect(toggle.valueSchema == ["type": "integer"])
        #expect(try #require(UnitCase.notes.actions.first { $0.name == "load" }).valueSchema == ["type": "null"])
    }

    @Test func aPartsActionsKeepTheirSchemas() throws {
        let composed = UnitCase("composed", view: NotesView.self, viewModel: NotesViewModel.self, parts: [UnitPart("side", .notes)])
        let add = try #require(composed.actions.first { $0.name == "side.add" })
        #expect(add.valueSchema[at: "/properties/text"] == ["type": "string"])
    }

    @Test func aValueOfAnUndescribedTypeIsAnyJSONThatDecodes() throws {
        let mood = try #require(UnitCase.moods.actions.first { $0.name == "mood" })
        #expect(mood.valueType == .any)
        #expect(mood.valueSchema == [:])
        let session = PageSession(registry: UnitRegistry(root: .moods, units: []))
        try session.start()
        let result = try session.perform("mood", value: "happy", on: "moods")
        #expect(result.rev == 1)
        #expect(try session.snapshot(of: "moods").view == ["value": "happy"])
        for bad: JSONValue in ["angry", 5, .null, ["happy": true]] {
            do {
                _ = try session.perform("mood", value: bad, on: "moods")
                Issue.record("\(bad) was taken")
            } catch {
                #expect(error.code == .invalidValue)
            }
        }
    }

    @Test func anUndeclaredActionCaseIsReportedAtStartNamingTheUnit() {
        let half = UnitCase("half", view: HalfView.self, viewModel: HalfViewModel.self)
        #expect(half.problems == ["unit half: its View does not declare the action forgotten"])
        #expect(half.actions.map(\.name) == ["declared"])
        let registry = UnitRegistry(root: .notes, units: [half])
        #expect(registry.problems == half.problems)
        #expect(UnitRegistry(root: .notes, units: []).problems.isEmpty)
    }

    @Test func twoUnitsOfOneNameAndDuplicatePartsAreReported() {
        let other = UnitCase("notes", view: HalfView.self, viewModel: HalfViewModel.self)
        let registry = UnitRegistry(root: .notes, units: [.notes, other])
        #expect(registry.problems.contains("unit notes: two different units are named notes"))
        #expect(registry.units.count == 1)
        let parts = UnitCase(
            "doubled", view: NotesView.self, viewModel: NotesViewModel.self,
            parts: [UnitPart("a", .notes), UnitPart("a", .notes, at: JSONPointer(tokens: ["b"])), UnitPart("c", .notes, at: .root)])
        #expect(parts.problems.contains("unit doubled: two parts are named a"))
        #expect(parts.problems.contains("unit doubled: the part c is mounted at the root"))
        let nested = UnitCase(
            "nested", view: NotesView.self, viewModel: NotesViewModel.self,
            parts: [UnitPart("outer", .notes), UnitPart("inner", .notes, at: JSONPointer(tokens: ["outer", "x"]))])
        #expect(nested.problems == ["unit nested: the part inner writes inside the part outer"])
        // The same declaration listed twice is one unit, not a problem; another entry rule under the name is one.
        #expect(UnitRegistry(root: .notes, units: [.notes, .notes]).problems.isEmpty)
        let flowOnly = UnitCase("notes", view: NotesView.self, viewModel: NotesViewModel.self, entry: .flowOnly)
        #expect(UnitRegistry(root: .notes, units: [flowOnly]).problems == ["unit notes: two different units are named notes"])
    }

    @Test func partsReadWhatTheirPageShares() throws {
        let tester = try PageTester(.sharing)
        #expect(tester.view == ["left": ["value": "shared by the page"], "right": ["value": "shared by the page"]])
        #expect(throws: PageError.self) { try PageTester(.notSharing) }
    }
}

/// What the sharing page hands its parts.
final class SharedLabel {
    let text: String
    init(_ text: String) { self.text = text }
}

struct LabelState: Codable, Equatable, Sendable { var value: String }

struct SharingView: View {}

final class SharingViewModel: ViewModel {
    init(context: UnitContext) { context.share(SharedLabel("shared by the page")) }
}

struct LabelView: View { typealias Output = Driver<LabelState> }

final class LabelViewModel: ViewModel {
    private let label: SharedLabel
    init(context: UnitContext) throws { label = try context.shared(SharedLabel.self) }
    func transform(_ input: NoInput) -> Driver<LabelState> { .just(LabelState(value: label.text)) }
}

extension UnitCase {
    static let label = UnitCase("label", view: LabelView.self, viewModel: LabelViewModel.self)
    static let sharing = UnitCase(
        "sharing", view: SharingView.self, viewModel: SharingViewModel.self,
        parts: [UnitPart("left", .label), UnitPart("right", .label)])
    static let notSharing = UnitCase(
        "notSharing", view: HalfView.self, viewModel: HalfViewModel.self, parts: [UnitPart("left", .label)])
}

/// A `String` enum that does not describe itself: its schema is `{}`.
enum Mood: String, Codable, Equatable, Sendable { case happy, sad }

struct MoodState: Codable, Equatable, Sendable { var value: Mood? }

enum MoodAction: String, PageAction { case mood }

struct MoodView: View {
    typealias Output = StateOutput<MoodState>
    func input(from actions: Actions<MoodAction>) -> Signal<Mood> { actions.signal(.mood, of: Mood.self) }
}

final class MoodViewModel: ViewModel {
    private let reducer = StateReducer<MoodState, Mood>(MoodState())
    init(context: UnitContext) {}
    func transform(_ moods: Signal<Mood>) -> StateOutput<MoodState> { reducer.run(moods) { $0.value = $1 } }
}

extension UnitCase {
    static let moods = UnitCase("moods", view: MoodView.self, viewModel: MoodViewModel.self)
}

struct NarrowOptionalForm: Codable, Sendable { var ratio: Float?; var id: Int64?; var name: String? }
struct OptionalItems: Codable, Sendable { var marks: [Int?]; var byName: [String: Int?] }
final class Tree2: Codable, Sendable { let left: Tree2?; let right: Tree2?; let name: String }
final class Tree3: Codable, Sendable { let a: Tree3?; let b: Tree3?; let c: Tree3? }

enum OptionalFormAction: String, PageAction { case maybe }

struct OptionalFormView: View {
    func input(from actions: Actions<OptionalFormAction>) -> Signal<NarrowOptionalForm?> {
        actions.signal(.maybe, of: NarrowOptionalForm?.self)
    }
}

final class OptionalFormViewModel: ViewModel {
    init(context: UnitContext) {}
    func transform(_ input: Signal<NarrowOptionalForm?>) -> NoOutput { NoOutput() }
}

/// A schema is never stricter than decoding (found in review): every value these types decode is valid.
@Suite struct SchemaLeniencyTests {
    @Test func optionalMembersOfEveryNumberTypeAreNeitherRequiredNorNonNull() {
        let schema = JSONSchema.of(NarrowOptionalForm.self).document
        #expect(schema["required"] == nil)
        #expect(schema[at: "/properties/ratio"] == ["type": ["number", "null"]])
        #expect(schema[at: "/properties/id"] == ["type": ["integer", "null"]])
    }

    @Test func optionalElementsAndValuesAllowNull() {
        let schema = JSONSchema.of(OptionalItems.self).document
        #expect(schema[at: "/properties/marks/items"] == ["type": ["integer", "null"]])
        #expect(schema[at: "/properties/byName/additionalProperties"] == ["type": ["integer", "null"]])
    }

    @Test func recursiveTypesAreDescribedOnceNotOncePerPath() {
        // Before, Tree3's derivation visited 3^16 nodes; now each recursive member is `{}` (and nullable) at once.
        let three = JSONSchema.of(Tree3.self).document
        #expect(three[at: "/properties/a"] == [:])
        #expect(three[at: "/properties/c"] == [:])
        let two = JSONSchema.of(Tree2.self).document
        #expect(two[at: "/properties/name"] == ["type": "string"])
        #expect(two["required"] == ["name"])
        #expect(two.jsonBytes.count < 400)
    }

    @Test func anOptionalActionValueTakesNull() throws {
        let unit = UnitCase("optionalForm", view: OptionalFormView.self, viewModel: OptionalFormViewModel.self)
        #expect(unit.actions.first?.valueType == .any)
        let session = PageSession(registry: UnitRegistry(root: unit, units: []))
        try session.start()
        _ = try session.perform("maybe", value: .null, on: "optionalForm")
        _ = try session.perform("maybe", value: ["ratio": 0.5], on: "optionalForm")
        do {
            _ = try session.perform("maybe", value: ["ratio": "x"], on: "optionalForm")
            Issue.record("a ratio of \"x\" was taken")
        } catch {
            #expect(error.code == .invalidValue)
        }
    }
}
