import MVVMR

// Effects (docs/GUIDE.md, section 6): a search through an async service, the latest search winning; it can be
// cancelled, and a person found opens the editor.

protocol Directory: Sendable {
    func people(matching query: String) async throws -> [String]
}

struct LookupState: Codable, Equatable, Sendable {
    var query = ""
    var people: [String] = []
    var searching = false
    var status = ""
}

enum LookupAction: String, PageAction { case search, cancel, open }

/// The user's actions, and what the effects bring back: an effect's event is logged, so it is `Codable`.
enum LookupEvent: Codable, Sendable {
    case search(String), cancel, open(Int)
    case found([String]), failed(String)
}

struct LookupView: View {
    typealias Output = StateOutput<LookupState>
    func input(from actions: Actions<LookupAction>) -> Signal<LookupEvent> {
        .merge(
            actions.signal(.search, of: String.self, maxLength: 100).map(LookupEvent.search),
            actions.signal(.cancel).map { .cancel },
            actions.signal(.open, of: Int.self).map(LookupEvent.open))
    }
}

final class LookupViewModel: ReducerViewModel {
    let reducer: StateReducer<LookupState, LookupEvent>
    private let directory: any Directory
    private let scheduler: Scheduler

    init(context: UnitContext, state: LookupState?) throws {
        directory = try context.services.require((any Directory).self)
        scheduler = context.scheduler
        reducer = StateReducer(state ?? LookupState())
    }

    /// No saved state while a search runs: its answer is a job in flight, which a snapshot cannot hold.
    var savedState: LookupState? { reducer.state.searching ? nil : reducer.state }

    func transform(_ events: Signal<LookupEvent>) -> StateOutput<LookupState> {
        reducer.run(events, on: scheduler) { [directory] state, event in
            switch event {
            case .search(let text):
                let query = text.trimmed
                (state.query, state.searching) = (query, true)
                return .run("search") { .found(try await directory.people(matching: query)) } catching: { .failed($0) }
            case .cancel:
                (state.searching, state.status) = (false, "Cancelled")
                return .cancel("search")
            case .found(let people):
                (state.people, state.searching, state.status) = (people, false, "\(people.count.grouped()) found")
            case .failed(let reason):
                (state.searching, state.status) = (false, "Failed: \(reason)")
            case .open(let index):
                guard state.people.indices.contains(index) else { return .none }
                return .route(.push(.editor, sending: state.people[index]))
            }
            return .none
        }
    }
}

extension UnitCase {
    static let lookup = UnitCase("lookup", view: LookupView.self, viewModel: LookupViewModel.self)
}

/// A directory of three people; "fail" fails.
struct FixedDirectory: Directory {
    struct Unavailable: Error {}
    func people(matching query: String) async throws -> [String] {
        if query == "fail" { throw Unavailable() }
        return ["Ada Lovelace", "Alan Turing", "Grace Hopper"].filter { $0.containsIgnoringCase(query) }
    }
}
