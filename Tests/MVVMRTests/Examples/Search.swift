import JSONPatch
import MVVMR

// Async Model calls: a debounced query runs a search service; newer queries cancel older ones.

protocol SearchService: Sendable {
    func results(for query: String) async -> [SearchResult]
}

struct SearchResult: Sendable, Codable, JSONRepresentable {
    let key: String
    let title: String
    var jsonValue: JSONValue { ["key": .string(key), "title": .string(title)] }
}

struct FixedSearch: SearchService {
    func results(for query: String) async -> [SearchResult] {
        query.split(separator: " ").map { SearchResult(key: String($0), title: $0.uppercased()) }
    }
}

struct SearchInput { let query: Signal<String> }
struct SearchOutput {
    let results: Driver<[SearchResult]>
    let searching: Driver<Bool>
}

enum SearchAction: String, PageAction { case query }

struct SearchView: View {
    func input(from actions: Actions<SearchAction>) -> SearchInput { SearchInput(query: actions.signal(.query, of: String.self)) }
    func bind(_ output: SearchOutput, to page: Page) {
        page.bind(output.results, at: "/results", identifiedBy: "key")
        page.bind(output.searching, at: "/searching")
    }
}

final class SearchViewModel: ViewModel {
    private let search: any SearchService
    private let scheduler: Scheduler

    init(context: UnitContext) throws {
        search = try context.services.require((any SearchService).self)
        scheduler = context.scheduler
    }

    func transform(_ input: SearchInput) -> SearchOutput {
        let search = self.search
        let query = input.query.debounce(.milliseconds(300), on: scheduler)
        let results = query.flatMapLatest(on: scheduler) { query in await search.results(for: query) }
        let searching = Signal.merge(query.map { _ in true }, results.map { _ in false })
        return SearchOutput(
            results: results.asDriver(startingWith: []), searching: searching.asDriver(startingWith: false))
    }
}

extension UnitCase {
    static let search = UnitCase("search", view: SearchView.self, viewModel: SearchViewModel.self)
}
