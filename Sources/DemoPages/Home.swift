import MVVMR

// The demo's root page: a menu of the other pages; `open` with a unit name pushes it. A name that
// is not in the menu changes nothing.
//
// View: {"title": "MVVMR demo", "items": [{"id": "greeting", "title": "Greeting", "summary": "…"}, …]}

/// One entry of the menu: the unit's name, its title and what it shows.
struct HomeMenuItem: Codable, Equatable, Sendable { var id: String, title: String, summary: String }

/// What the menu shows.
struct HomeState: Codable, Equatable, Sendable { var title: String, items: [HomeMenuItem] }

/// The menu's action: `open` (a unit's name).
enum HomeAction: String, PageAction { case open }

/// Declares `open`; the menu is bound whole.
struct HomeView: View {
    typealias Output = StateOutput<HomeState>
    func input(from actions: Actions<HomeAction>) -> Signal<String> { actions.signal(.open, of: String.self) }
}

/// Lists the pages and pushes the one opened.
final class HomeViewModel: ViewModel {
    /// The pages of the menu, in order, with their titles and summaries.
    static let menu: [(unit: UnitCase, title: String, summary: String)] = [
        (.greeting, "Greeting", "The seed article's page: a label, a button and a Person service."),
        (.demo, "Demo", "One button whose title and colour change when tapped."),
        (.login, "Login", "Validation, an async sign-in, then the router: push, present, back with a value, root."),
        (.employees, "Employees", "A list loaded by an async service, pushed over SSE; failures and reload."),
        (.counters, "Counters", "Rows diffed by identity: one increment is one patch; pages loaded on demand."),
        (.dashboard, "Dashboard", "Three sub-views with their own ViewModels: a ticking clock, quotes and stats."),
        (.board, "Board", "A shared board: a message posted in one session appears live in every session that has it open."),
    ]

    init(context: UnitContext) {}

    func transform(_ open: Signal<String>) -> StateOutput<HomeState> {
        let items = Self.menu.map { HomeMenuItem(id: $0.unit.name, title: $0.title, summary: $0.summary) }
        let routes = open.compactMap { name in Self.menu.first { $0.unit.name == name } }.map { Route.push($0.unit) }
        return StateOutput(state: .just(HomeState(title: "MVVMR demo", items: items)), routes: routes)
    }
}

extension UnitCase {
    /// The menu: `open` (string: a unit's name).
    public static let home = UnitCase("home", view: HomeView.self, viewModel: HomeViewModel.self)
}
