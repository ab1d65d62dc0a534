import JSONPatch
import MVVMR
import Testing

// Arrays of Equatable elements are written element by element when few changed in place: the patch must
// be exactly what diffing the whole array would give in effect, and fall back to the whole array whenever
// an element's identity moved.

struct TableRow: Equatable, JSONRepresentable {
    var id: Int
    var title: String
    var count: Int
    var jsonValue: JSONValue { ["id": .int(id), "title": .string(title), "count": .int(count)] }
}

enum TableEdit {
    case bump(Int)
    case bumpEvery
    case replaceIdentity(Int)
    case append
    case removeFirst
    case rotate
    case touchNothing
}

struct TableInput { let edits: Signal<TableEdit> }
struct TableOutput { let rows: Driver<[TableRow]> }

struct TableView: View {
    func input(from actions: Actions<NamedAction>) -> TableInput {
        let edits = Signal.merge(
            actions.signal("bump", of: Int.self).map { TableEdit.bump($0) },
            actions.signal("bumpEvery").map { TableEdit.bumpEvery },
            actions.signal("replaceIdentity", of: Int.self).map { TableEdit.replaceIdentity($0) },
            actions.signal("append").map { TableEdit.append },
            actions.signal("removeFirst").map { TableEdit.removeFirst },
            actions.signal("rotate").map { TableEdit.rotate },
            actions.signal("touchNothing").map { TableEdit.touchNothing })
        return TableInput(edits: edits)
    }

    func bind(_ output: TableOutput, to page: Page) {
        page.bind(output.rows, at: "/rows")
    }
}

final class TableViewModel: ViewModel {
    init(context: UnitContext) {}

    func transform(_ input: TableInput) -> TableOutput {
        let initial = (1...16).map { TableRow(id: $0, title: "Row \($0)", count: 0) }
        let rows = input.edits.scan(initial) { rows, edit in
            var rows = rows
            switch edit {
            case .bump(let index): rows[index].count += 1
            case .bumpEvery: for index in rows.indices { rows[index].count += 1 }
            case .replaceIdentity(let index): rows[index] = TableRow(id: 100 + index, title: "New", count: 0)
            case .append: rows.append(TableRow(id: 1000 + rows.count, title: "Appended", count: 0))
            case .removeFirst: rows.removeFirst()
            case .rotate: rows.append(rows.removeFirst())
            case .touchNothing: break
            }
            return rows
        }
        return TableOutput(rows: rows.asDriver(startingWith: initial))
    }
}

extension UnitCase {
    static let table = UnitCase("table", view: TableView.self, viewModel: TableViewModel.self)
}

@Suite struct ArrayBindingTests {
    private func session() throws -> PageSession {
        let session = PageSession(registry: UnitRegistry(root: .table, units: []))
        try session.start()
        return session
    }

    /// Performs an action; checks that the patch takes the previous view to the new one.
    private func perform(_ action: String, _ value: JSONValue = .null, on session: PageSession) throws -> JSONPatch {
        let before = try session.snapshot(of: "table").view
        let result = try session.perform(action, value: value, on: "table")
        let after = try session.snapshot(of: "table").view
        let patch = try #require(result.patch)
        #expect(try patch.apply(to: before) == after)
        return patch
    }

    @Test func oneChangedRowIsOneReplaceOfItsField() throws {
        let session = try session()
        let patch = try perform("bump", 5, on: session)
        #expect(patch.operations == [.replace(path: JSONPointer(tokens: ["rows", "5", "count"]), value: 1)])
        let again = try perform("bump", 15, on: session)
        #expect(again.operations == [.replace(path: JSONPointer(tokens: ["rows", "15", "count"]), value: 1)])
    }

    @Test func aRowWhoseIdentityChangedIsDiffedByIdentityNotRewrittenInPlace() throws {
        let session = try session()
        let patch = try perform("replaceIdentity", 3, on: session)
        // By identity: row 4 leaves and row 103 arrives; never a `replace` of `/rows/3/id`.
        #expect(!patch.operations.contains(.replace(path: JSONPointer(tokens: ["rows", "3", "id"]), value: 103)))
        #expect(patch.operations.contains { if case .remove = $0 { true } else { false } })
    }

    @Test func manyChangesAddsRemovalsAndMovesStillGiveTheRightDocument() throws {
        let session = try session()
        let every = try perform("bumpEvery", on: session)
        #expect(every.count == 16)
        let appended = try perform("append", on: session)
        #expect(appended.count == 1)
        let removed = try perform("removeFirst", on: session)
        #expect(removed.operations == [.remove(path: JSONPointer(tokens: ["rows", "0"]))])
        let rotated = try perform("rotate", on: session)
        #expect(rotated.count == 1)
        let bumped = try perform("bump", 0, on: session)
        #expect(bumped.count == 1)
    }

    @Test func anUnchangedArrayWritesNothing() throws {
        let session = try session()
        let result = try session.perform("touchNothing", on: "table")
        #expect(result.patch == JSONPatch([]))
        #expect(result.rev == 0)
        #expect(result.events.isEmpty)
    }

    /// A page read carries the view's JSON text, cached until the page changes: never stale.
    @Test func aReadsEncodedViewFollowsEveryChange() throws {
        let session = try session()
        for step in 0..<3 {
            let read = try session.read("table")
            #expect(try JSONValue(parsing: read.encodedView) == read.snapshot.view)
            #expect(read.snapshot.rev == step)
            #expect(read.sequence == session.sequence)
            let again = try session.read("table")
            #expect(again.encodedView == read.encodedView)
            try session.perform("bump", value: .int(step), on: "table")
        }
        let last = try session.read("table")
        #expect(try JSONValue(parsing: last.encodedView) == last.snapshot.view)
        #expect(last.snapshot.view[JSONPointer(tokens: ["rows", "2", "count"])] == .int(1))
    }
}
