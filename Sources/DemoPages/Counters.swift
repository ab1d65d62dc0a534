import MVVMR

// The counters page: rows with an id, a title and a count. `increment` with a row id adds one to that
// row only (an unknown id changes nothing); the rows are diffed by `id`, so an increment is one patch
// operation. `loadMore` asks the async `CounterPagesService` for the next page and appends it.
//
// View: {"rows": [{"id": 1, "title": "Row 1", "count": 0}, …], "page": 1, "pageSize": 10,
//        "hasMore": true, "loading": false, "status": "Loaded page 1"}

/// The rows of the counters page and how their loading stands.
struct CountersState: Hashable, Codable, Sendable {
    /// The rows of every page loaded so far.
    var rows: [CounterRow]
    /// The last page loaded.
    var page: Int
    /// Rows per page.
    let pageSize: Int
    /// Whether a page follows the last one loaded.
    var hasMore: Bool
    /// Whether a page is being loaded.
    var loading: Bool
    /// Which page is loaded, or what went wrong.
    var status: String

    /// The state showing the first page.
    /// - Parameters:
    ///   - first: page 1.
    ///   - pageSize: rows per page.
    init(first: CounterPage, pageSize: Int) {
        rows = first.rows
        page = first.number
        self.pageSize = pageSize
        hasMore = !first.isLast
        loading = false
        status = "Loaded page \(first.number)"
    }

    /// The page `loadMore` should request now; nil while loading or after the last page.
    var nextPageToLoad: Int? {
        !loading && hasMore ? page + 1 : nil
    }

    /// The state after `event`.
    /// - Parameter event: an increment, or a page request starting or answering.
    func applying(_ event: CountersEvent) -> CountersState {
        var next = self
        switch event {
        case .increment(let id):
            guard let index = rows.firstIndex(where: { $0.id == id }) else { return self }
            next.rows[index].count += 1
        case .requested(let number):
            next.loading = true
            next.status = "Loading page \(number)…"
        case .loaded(let loaded):
            next.rows += loaded.rows
            next.page = loaded.number
            next.hasMore = !loaded.isLast
            next.loading = false
            next.status = "Loaded page \(loaded.number)"
        case .failed(let number, let reason):
            next.loading = false
            next.status = "Could not load page \(number): \(reason)"
        }
        return next
    }
}

/// What happens on the counters page.
enum CountersEvent: Sendable, Hashable, Codable {
    /// The row with this id is incremented.
    case increment(Int)
    /// This page is requested.
    case requested(Int)
    /// A page arrived.
    case loaded(CounterPage)
    /// A page could not be loaded, for this reason.
    case failed(Int, String)
}

/// The latest state of a page's `scan`, for streams that must decide on it (only touched inside the
/// session's serial context).
final class LatestState<State> {
    /// The state after the latest event.
    var value: State

    init(_ value: State) {
        self.value = value
    }
}

/// The counters page's events.
struct CountersInput {
    /// The id of the row to increment.
    let increment: Signal<Int>
    /// The user asks for the next page.
    let loadMore: Signal<Void>
}

/// What the counters page shows.
struct CountersOutput {
    /// The rows (diffed by `id`).
    let rows: Driver<[CounterRow]>
    /// The last page loaded.
    let page: Driver<Int>
    /// Rows per page.
    let pageSize: Driver<Int>
    /// Whether another page can be loaded.
    let hasMore: Driver<Bool>
    /// Whether a page is being loaded.
    let loading: Driver<Bool>
    /// Which page is loaded, or what went wrong.
    let status: Driver<String>
}

/// Declares `increment` (int) and `loadMore`; writes `/rows`, `/page`, `/pageSize`, `/hasMore`,
/// `/loading` and `/status`.
struct CountersView: View {
    func input(from actions: Actions) -> CountersInput {
        CountersInput(increment: actions.signal("increment", of: Int.self), loadMore: actions.signal("loadMore"))
    }

    func bind(_ output: CountersOutput, to page: Page) {
        page.bind(output.rows, at: "/rows", identifiedBy: "id")
        page.bind(output.page, at: "/page")
        page.bind(output.pageSize, at: "/pageSize")
        page.bind(output.hasMore, at: "/hasMore")
        page.bind(output.loading, at: "/loading")
        page.bind(output.status, at: "/status")
    }
}

/// Counts per row and loads further pages on demand, one at a time. Restorable: its saved state is the
/// scan's latest state (none while a page is loading), so a long session's increments are compacted.
final class CountersViewModel: RestorableViewModel {
    private let pages: any CounterPagesService
    private let scheduler: Scheduler
    /// The state the page starts from: page 1, or the saved state it is restored from.
    private let initial: CountersState
    /// The scan's latest state.
    private let latest: LatestState<CountersState>

    init(context: UnitContext) throws {
        pages = try context.services.require((any CounterPagesService).self)
        scheduler = context.scheduler
        initial = CountersState(first: pages.firstPage(), pageSize: pages.pageSize)
        latest = LatestState(initial)
    }

    init(context: UnitContext, restoring savedState: CountersState) throws {
        pages = try context.services.require((any CounterPagesService).self)
        scheduler = context.scheduler
        initial = savedState
        latest = LatestState(savedState)
    }

    /// The latest state; nil while a page is loading (its answer is a job in flight).
    var savedState: CountersState? {
        latest.value.loading ? nil : latest.value
    }

    func transform(_ input: CountersInput) -> CountersOutput {
        let pages = self.pages
        let initial = self.initial
        let latest = self.latest
        // A request only while no other runs and a page is left; it is read before the request is
        // applied, and each event is applied before the next one arrives.
        let requests = input.loadMore.compactMap { latest.value.nextPageToLoad }
        let answers = requests.flatMapLatest(on: scheduler) { number -> CountersEvent in
            do {
                return .loaded(try await pages.page(number))
            } catch {
                return .failed(number, "\(error)")
            }
        }
        let events = Signal.merge(
            input.increment.map(CountersEvent.increment), requests.map(CountersEvent.requested), answers)
        let state = events.scan(initial) { state, event in
            let next = state.applying(event)
            latest.value = next
            return next
        }
        .asDriver(startingWith: initial)
        return CountersOutput(
            rows: state.map(\.rows),
            page: state.map(\.page),
            pageSize: state.map(\.pageSize),
            hasMore: state.map(\.hasMore),
            loading: state.map(\.loading),
            status: state.map(\.status))
    }
}

extension UnitCase {
    /// The counters page: `increment` (int: a row id), `loadMore`.
    public static let counters = UnitCase("counters", view: CountersView.self, viewModel: CountersViewModel.self)
}
