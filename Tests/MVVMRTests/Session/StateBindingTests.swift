import JSONPatch
import Locking
import MVVMR
import MVVMRTesting
import Testing

// A whole Codable state bound at the page's root: each member is written only when it changed, an array of
// Identifiable rows is diffed by `id` (one changed row is one operation), nil optionals are `null`, the reducer
// applies events and effects, typed actions decode any Decodable value, and parts share values with their page.

struct NoteRow: Codable, Equatable, Identifiable, Sendable {
    var id: Int
    var text: String
    var done = false
}

struct NotesState: Codable, Equatable, Sendable {
    var title = "Notes"
    var rows: [NoteRow] = (1...12).map { NoteRow(id: $0, text: "Note \($0)") }
    var selected: Int?
    var filter = NotesFilter.all
    var counts = [String: Int]()
}

enum NotesFilter: String, Codable, CaseIterable, Sendable, JSONSchemaDescribing { case all, open, done }

/// A note typed into the form: any Decodable value of an action.
struct NewNote: Codable, Equatable, Sendable {
    var text: String
    var done: Bool?
}

enum NotesAction: String, PageAction { case toggle, add, select, rename, filter, load, cancelLoad }

enum NotesEvent: Codable, Sendable {
    case toggle(Int), add(NewNote), select(Int), rename(String), filter(NotesFilter), load, cancelLoad
    case loaded([String])
}

struct NotesView: View {
    typealias Output = StateOutput<NotesState>
    func input(from actions: Actions<NotesAction>) -> Signal<NotesEvent> {
        .merge(
            actions.signal(.toggle, of: Int.self).map(NotesEvent.toggle),
            actions.signal(.add, of: NewNote.self).map(NotesEvent.add),
            actions.signal(.select, of: Int.self).map(NotesEvent.select),
            actions.signal(.rename, of: String.self).map(NotesEvent.rename),
            actions.signal(.filter, of: NotesFilter.self).map(NotesEvent.filter),
            actions.signal(.load).map { NotesEvent.load },
            actions.signal(.cancelLoad).map { NotesEvent.cancelLoad })
    }
}

/// Loads titles from this service, counting its calls.
final class NoteTitles: Sendable {
    let calls = Locked(0)
    func titles() async -> [String] {
        calls.withLock { $0 += 1 }
        return ["Loaded 1", "Loaded 2"]
    }
}

final class NotesViewModel: ReducerViewModel {
    let reducer: StateReducer<NotesState, NotesEvent>
    private let scheduler: Scheduler
    private let titles: NoteTitles

    init(context: UnitContext, state: NotesState?) throws {
        reducer = StateReducer(state ?? NotesState())
        scheduler = context.scheduler
        titles = context.services[NoteTitles.self] ?? NoteTitles()
    }

    func transform(_ events: Signal<NotesEvent>) -> StateOutput<NotesState> {
        reducer.run(events, on: scheduler) { [titles] state, event in
            switch event {
            case .toggle(let id):
                if let index = state.rows.firstIndex(where: { $0.id == id }) { state.rows[index].done.toggle() }
            case .add(let note):
                state.rows.append(NoteRow(id: (state.rows.map(\.id).max() ?? 0) + 1, text: note.text, done: note.done ?? false))
            case .select(let id):
                state.selected = id < 0 ? nil : id
            case .rename(let title):
                state.title = title
                if title == "detail" { return .merge(.route(.push(.noteDetail)), .none) }
            case .filter(let filter):
                state.filter = filter
            case .load:
                state.title = "Loading"
                return .run("load") { .loaded(await titles.titles()) }
            case .cancelLoad:
                state.title = "Cancelled"
                return .cancel("load")
            case .loaded(let loaded):
                state.title = loaded.joined(separator: ", ")
                state.counts["loads", default: 0] += 1
            }
            return .none
        }
    }
}

extension UnitCase {
    static let notes = UnitCase("notes", view: NotesView.self, viewModel: NotesViewModel.self)
}

@Suite struct StateBindingTests {
    @Test func theStateIsTheViewWithNilAsNull() throws {
        let tester = try PageTester(.notes)
        #expect(tester.view["title"] == "Notes")
        #expect(tester.view["selected"] == .null)
        #expect(tester.view["filter"] == "all")
        #expect(tester.view["counts"] == [:])
        #expect(tester.view["rows"]?.arrayValue?.count == 12)
        #expect(tester.view["rows"]?[at: "/0"] == ["id": 1, "text": "Note 1", "done": false])
    }

    @Test func oneChangedRowIsOneOperation() throws {
        let tester = try PageTester(.notes)
        tester.send(NotesAction.toggle, 5, patch: [.replace(path: try JSONPointer("/rows/4/done"), value: true)])
        tester.send(NotesAction.toggle, 12, patch: [.replace(path: try JSONPointer("/rows/11/done"), value: true)])
        tester.send(NotesAction.toggle, 5, patch: [.replace(path: try JSONPointer("/rows/4/done"), value: false)])
    }

    @Test func onlyChangedMembersAreWrittenAndNothingChangedIsNoRevision() throws {
        let tester = try PageTester(.notes)
        tester.send(NotesAction.select, 3, patch: [.replace(path: try JSONPointer("/selected"), value: 3)])
        tester.send(NotesAction.select, 3)
        tester.send(NotesAction.toggle, 99)
        #expect(tester.rev == 1)
        tester.send(NotesAction.select, -1, patch: [.replace(path: try JSONPointer("/selected"), value: .null)])
        tester.send(NotesAction.filter, "done", patch: [.replace(path: try JSONPointer("/filter"), value: "done")])
    }

    @Test func anAddedRowIsOneAdd() throws {
        let tester = try PageTester(.notes)
        tester.send(
            NotesAction.add, ["text": "Milk"],
            patch: [.add(path: try JSONPointer("/rows/12"), value: ["id": 13, "text": "Milk", "done": false])])
    }

    @Test func aDecodableValueThatDoesNotDecodeIsInvalidAndChangesNothing() throws {
        let tester = try PageTester(.notes)
        let session = tester.session
        for bad: JSONValue in [["text": 5], ["done": true], ["text": "x", "done": "yes"]] {
            do {
                _ = try session.perform("add", value: bad, on: "notes")
                Issue.record("\(bad) was taken")
            } catch {
                #expect(error.code == .invalidValue)
            }
        }
        // A string enum takes its cases only.
        do {
            _ = try session.perform("filter", value: "later", on: "notes")
            Issue.record("an unknown case was taken")
        } catch {
            #expect(error.code == .invalidValue)
        }
        #expect(try session.snapshot(of: "notes").rev == 0)
        #expect(tester.actions.first { $0.name == "add" }?.valueType == .object)
        #expect(tester.actions.first { $0.name == "filter" }?.valueType == .string)
    }

    @Test func theTesterSendsEncodableValuesAndChecksRefusals() throws {
        let tester = try PageTester(.notes)
        tester.send(NotesAction.add, encoding: NewNote(text: "Eggs", done: true)) { view in
            view[at: "/rows/12"] = ["id": 13, "text": "Eggs", "done": true]
        }
        #expect(tester.sendRefused(NotesAction.add, ["text": 5])?.code == .invalidValue)
        #expect(tester.sendRefused(NotesAction.filter, "later")?.code == .invalidValue)
        #expect(tester.rev == 1)
    }

    @Test func effectsRunThroughTheSchedulerAndCanBeCancelled() async throws {
        let titles = NoteTitles()
        var services = Services()
        services.register(titles)
        let tester = try PageTester(.notes, services: services)
        tester.send(NotesAction.load) { $0[at: "/title"] = "Loading" }
        await tester.runPendingWork { view in
            view[at: "/title"] = "Loaded 1, Loaded 2"
            view[at: "/counts"] = ["loads": 1]
        }
        #expect(titles.calls.withLock { $0 } == 1)
        tester.send(NotesAction.load) { $0[at: "/title"] = "Loading" }
        tester.send(NotesAction.cancelLoad) { $0[at: "/title"] = "Cancelled" }
        // The cancelled load's answer is never applied.
        await tester.runPendingWork()
        #expect(tester.view["title"] == "Cancelled")
    }

    @Test func anEffectCanNavigate() throws {
        let session = PageSession(registry: UnitRegistry(root: .notes, units: [.noteDetail]))
        try session.start()
        let result = try session.perform("rename", value: "detail", on: "notes")
        #expect(result.navigation?.page.unit == "noteDetail")
        #expect(session.navigation.stack == ["notes", "noteDetail"])
    }

    @Test func aRestoredReducerPageShowsItsSavedState() throws {
        let tester = try PageTester(.notes)
        tester.send(NotesAction.toggle, 2) { $0[at: "/rows/1/done"] = true }
        let viewModel = try NotesViewModel(
            context: UnitContext(unit: "notes", scheduler: .virtual()), restoring: try #require(NotesViewModel(
                context: UnitContext(unit: "notes", scheduler: .virtual()), state: NotesState(title: "Saved")).savedState))
        #expect(viewModel.savedState?.title == "Saved")
    }
}

extension UnitCase {
    /// The same notes page, reached by a push, to go back from.
    static let noteDetail = UnitCase("noteDetail", view: NotesView.self, viewModel: NotesViewModel.self)
}
