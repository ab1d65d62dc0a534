#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

/// The guide shows its examples verbatim: every code block preceded by
/// `<!-- verbatim: path -->` must appear, line for line (indentation aside), in that file.
@Suite struct GuideTests {
    /// The files whose code the guide must show, so that its worked examples cannot be left out or drift.
    static let requiredExamples = [
        "Tests/MVVMRTests/Examples/Todo.swift", "Tests/MVVMRTests/Examples/TodoTests.swift",
        "Tests/MVVMRTests/Examples/Lookup.swift", "Tests/MVVMRTests/Examples/LookupTests.swift",
    ]

    /// The package root, from this file's path: Tests/MVVMRTests/Examples/GuideTests.swift.
    static let root: String = {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4)
        return parts.joined(separator: "/")
    }()

    static func read(_ relativePath: String) -> String? {
        guard let file = fopen(root + "/" + relativePath, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func normalized(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { String($0.drop { $0 == " " }) }
            .filter { !$0.isEmpty }
    }

    @Test func guideShowsTheExamplesVerbatim() throws {
        let guide = try #require(Self.read("docs/GUIDE.md"))
        let lines = guide.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var checked = 0
        var shown: Set<String> = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            index += 1
            guard line.hasPrefix("<!-- verbatim: "), line.hasSuffix(" -->") else { continue }
            let path = String(line.dropFirst("<!-- verbatim: ".count).dropLast(" -->".count))
            let source = try #require(Self.read(path), "\(path) is missing")
            guard index < lines.count, lines[index] == "```swift" else {
                Issue.record("no swift block after the verbatim marker for \(path)")
                continue
            }
            index += 1
            var block: [String] = []
            while index < lines.count, lines[index] != "```" {
                block.append(lines[index])
                index += 1
            }
            let expected = Self.normalized(block.joined(separator: "\n"))
            let actual = Self.normalized(source)
            let found = actual.indices.contains { start in
                start + expected.count <= actual.count && Array(actual[start..<start + expected.count]) == expected
            }
            #expect(found, "the guide's block for \(path) is not in that file")
            checked += 1
            shown.insert(path)
        }
        #expect(checked >= 10)
        for path in Self.requiredExamples {
            #expect(shown.contains(path), "the guide shows no verbatim block of \(path)")
        }
    }

    /// The todo page's whole file is in the guide, from its import to its last line: a reader who copies the
    /// block has the complete page.
    @Test func guideShowsTheWholeTodoPage() throws {
        let guide = try #require(Self.read("docs/GUIDE.md"))
        let source = try #require(Self.read("Tests/MVVMRTests/Examples/Todo.swift"))
        let code = Self.normalized(source).drop { $0.hasPrefix("//") && !$0.hasPrefix("///") }
        let marker = "<!-- verbatim: Tests/MVVMRTests/Examples/Todo.swift -->\n```swift\n"
        let start = try #require(guide.firstRange(of: marker)).upperBound
        let block = try #require(guide[start...].firstRange(of: "\n```\n")).lowerBound
        #expect(Self.normalized(guide[start..<block]) == Array(code))
    }

    /// What the guide says of the todo page besides its code: its first snapshot, its actions and their schemas,
    /// the start-up check, and a part's typed action.
    @Test func theTodoPageIsWhatTheGuideSays() throws {
        let tester = try PageTester(.todo)
        #expect(tester.view == ["todos": [], "filter": "all", "shown": []])
        #expect(tester.actions.map { "\($0.name):\($0.valueType.rawValue)" } == ["add:object", "toggle:int", "filter:string"])
        let add = try #require(UnitCase.todo.actions.first)
        #expect(
            add.valueSchema == ["type": "object", "properties": ["title": ["type": "string"]], "required": ["title"]])
        #expect(UnitCase.todo.actions.last?.valueSchema == ["type": "string", "enum": ["all", "open", "done"]])
        #expect(UnitCase.todo.viewSchema[at: "/properties/shown/items/properties/id"] == ["type": "integer"])
        #expect(UnitRegistry(root: .todo, units: [.todo, .about]).problems.isEmpty)
        // A String enum without JSONSchemaDescribing cannot be described, and is listed as any JSON.
        #expect(UnitCase("plain", view: PlainFilterView.self, viewModel: PlainFilterViewModel.self).actions.map(\.valueType) == [.any])

        let dashboard = try PageTester(.dashboard)
        dashboard.send(QuoteAction.shuffle, part: "quote") { $0[at: "/quote/text"] = "Less is more." }
    }
}

/// A filter enum that forgot `JSONSchemaDescribing`.
enum PlainFilter: String, Codable, CaseIterable { case all, done }
enum PlainFilterAction: String, PageAction { case filter }
struct PlainFilterView: View {
    func input(from actions: Actions<PlainFilterAction>) -> Signal<PlainFilter> { actions.signal(.filter, of: PlainFilter.self) }
}
final class PlainFilterViewModel: ViewModel {
    init(context: UnitContext) {}
    func transform(_ input: Signal<PlainFilter>) -> NoOutput { NoOutput() }
}
