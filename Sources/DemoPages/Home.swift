import JSONPatch
import MVVMR

// The demo's root page: a menu of the other pages; `open` with a unit name pushes it. A name that
// is not in the menu changes nothing.
//
// View: {"title": "MVVMR demo", "items": [{"id": "greeting", "title": "Greeting", "summary": "…"}, …]}

/// One entry of the home menu: the page it opens and how it is described.
struct HomeMenuItem: JSONRepresentable {
    /// The page the entry opens.
    let unit: UnitCase
    /// The entry's label.
    let title: String
    /// One sentence on what the page shows.
    let summary: String

    /// `{"id": "greeting", "title": "Greeting", "summary": "…"}`: the id is the unit's name.
    var jsonValue: JSONValue { ["id": .string(unit.name), "title": .string(title), "summary": .string(summary)] }
}

/// The home page's events.
struct HomeInput {
    /// The user picks a page by its unit name.
    let open: Signal<String>
}

/// What the home page shows, and where it navigates.
struct HomeOutput {
    /// The page's title.
    let title: Driver<String>
    /// The menu.
    let items: Driver<[HomeMenuItem]>
    /// Pushes of the pages picked.
    let route: Signal<Route>
}

/// Declares `open` and writes `/title` and `/items` (diffed by `id`).
struct HomeView: View {
    func input(from actions: Actions<NamedAction>) -> HomeInput {
        HomeInput(open: actions.signal("open", of: String.self))
    }

    func bind(_ output: HomeOutput, to page: Page) {
        page.bind(output.title, at: "/title")
        page.bind(output.items, at: "/items")
        page.route(output.route)
    }
}

/// Lists the demo's pages and pushes the one picked.
final class HomeViewModel: ViewModel {
    /// The menu, in the order of docs/DEMO.md.
    static let menu: [HomeMenuItem] = [
        HomeMenuItem(
            unit: .greeting, title: "Greeting",
            summary: "The seed article's page: a label, a button and a Person service."),
        HomeMenuItem(unit: .demo, title: "Demo", summary: "One button whose title and colour change when tapped."),
        HomeMenuItem(
            unit: .login, title: "Login",
            summary: "Validation, an async sign-in, then the router: push, present, back with a value, root."),
        HomeMenuItem(
            unit: .employees, title: "Employees",
            summary: "A list loaded by an async service, pushed over SSE; failures and reload."),
        HomeMenuItem(
            unit: .counters, title: "Counters",
            summary: "Rows diffed by identity: one increment is one patch; pages loaded on demand."),
        HomeMenuItem(
            unit: .dashboard, title: "Dashboard",
            summary: "Three sub-views with their own ViewModels: a ticking clock, quotes and stats."),
        HomeMenuItem(
            unit: .board, title: "Board",
            summary: "A shared board: a message posted in one session appears live in every session that has it open."),
    ]

    init(context: UnitContext) {}

    func transform(_ input: HomeInput) -> HomeOutput {
        let menu = Self.menu
        let route = input.open
            .compactMap { name in menu.first { $0.unit.name == name } }
            .map { Route.push($0.unit) }
        return HomeOutput(title: .just("MVVMR demo"), items: .just(menu), route: route)
    }
}

extension UnitCase {
    /// The root page, a menu of the others: `open` (string).
    public static let home = UnitCase("home", view: HomeView.self, viewModel: HomeViewModel.self)
}
