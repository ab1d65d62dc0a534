import MVVMR

// The counters page: rows with an id, a title and a count. `increment` with a row id adds one to that
// row only (an unknown id changes nothing); the rows are diffed by `id`, so an increment is one patch
// operation. `loadMore` asks the async `CounterPagesService` for the next page and appends it.
//
// View: {"rows": [{"id": 1, "title": "Row 1", "count": 0}, …], "page": 1, "pageSize": 10,
//        "hasMore": true, "loading": false, "status": "Loaded page 1"}

/// The rows of the counters page and how their loading stands: the page's view.
struct CountersState: Hashable, Codable, Sendable {
    /// The rows of every page loaded so far.
    var rows: [CounterRow]
    /// The last page loaded.
    var page: Int
    /// Rows per page.
    var pageSize: Int
    /// Whether a page follows the last one loaded.
    var hasMore: Bool
    /// Whether a page is being loaded.
    var loading = false
    /// Which page is loaded, or what went wrong.
    var status: String
}

/// The counters page's actions: `increment` (a row id) and `loadMore`.
enum CountersAction: String, PageAction { case increment, loadMore }

/// What happens on the counters page: the user's actions and the answers of the pages service.
enum CountersEvent: Sendable, Hashable, Codable {
    case increment(Int), loadMore, loaded(CounterPage), failed(Int, String)
}

/// Turns `increment` and `loadMore` into events; the state is bound whole (rows diffed by `id`).
struct CountersView: View {
    typealias Output = StateOutput<CountersState>
    func input(from actions: Actions<CountersAction>) -> Signal<CountersEvent> {
        .merge(actions.signal(.increment, of: Int.self).map(CountersEvent.increment), actions.signal(.loadMore).map { .loadMore })
    }
}

/// Counts per row and loads further pages on demand, one at a time. Restorable: its saved state is the
/// page's state (none while a page is loading), so a long session's increments are compacted.
final class CountersViewModel: ReducerViewModel {
    let reducer: StateReducer<CountersState, CountersEvent>
    private let pages: any CounterPagesService
    private let scheduler: Scheduler

    init(context: UnitContext, state: CountersState?) throws {
        pages = try context.services.require((any CounterPagesService).self)
        scheduler = context.scheduler
        let first = pages.firstPage()
        reducer = StateReducer(
            state
                ?? CountersState(
                    rows: first.rows, page: first.number, pageSize: pages.pageSize, hasMore: !first.isLast,
                    status: "Loaded page \(first.number)"))
    }

    /// The page's state; nil while a page is loading (its answer is a job in flight).
    var savedState: CountersState? { reducer.state.loading ? nil : reducer.state }

    func transform(_ events: Signal<CountersEvent>) -> StateOutput<CountersState> {
        reducer.run(events, on: scheduler) { [pages] state, event in
            switch event {
            case .increment(let id):
                if let index = state.rows.firstIndex(where: { $0.id == id }) { state.rows[index].count += 1 }
            case .loadMore:
                guard !state.loading, state.hasMore else { return .none }
                let number = state.page + 1
                (state.loading, state.status) = (true, "Loading page \(number)…")
                return .run { .loaded(try await pages.page(number)) } catching: { .failed(number, $0) }
            case .loaded(let page):
                (state.page, state.hasMore, state.loading) = (page.number, !page.isLast, false)
                state.rows += page.rows
                state.status = "Loaded page \(page.number)"
            case .failed(let number, let reason):
                (state.loading, state.status) = (false, "Could not load page \(number): \(reason)")
            }
            return .none
        }
    }
}

extension UnitCase {
    /// The counters page: `increment` (int: a row id), `loadMore`.
    public static let counters = UnitCase("counters", view: CountersView.self, viewModel: CountersViewModel.self)
}
