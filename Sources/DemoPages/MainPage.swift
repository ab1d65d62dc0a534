// (Named MainPage.swift: a file named main.swift would make this target an executable.)

import MVVMR

// The page after login: welcomes the user sent by `login`, presents `settings` with the current
// theme, shows the theme settings returns, and makes `login` the root on logout.
//
// View: {"user": "david", "welcome": "Welcome, david", "theme": "light", "themeLabel": "Theme: light"}

/// The main page's events.
struct MainInput {
    /// The user opens the settings.
    let openSettings: Signal<Void>
    /// The user signs out.
    let logout: Signal<Void>
}

/// What the main page shows, and where it navigates.
struct MainOutput {
    /// The signed-in user's name.
    let user: Driver<String>
    /// The welcome line.
    let welcome: Driver<String>
    /// The theme chosen last in the settings.
    let theme: Driver<Theme>
    /// The theme, as a label.
    let themeLabel: Driver<String>
    /// Presents `settings`, or makes `login` the root.
    let route: Signal<Route>
}

/// Declares `openSettings` and `logout`; writes `/user`, `/welcome`, `/theme` and `/themeLabel`.
struct MainView: View {
    func input(from actions: Actions<NamedAction>) -> MainInput {
        MainInput(openSettings: actions.signal("openSettings"), logout: actions.signal("logout"))
    }

    func bind(_ output: MainOutput, to page: Page) {
        page.bind(output.user, at: "/user")
        page.bind(output.welcome, at: "/welcome")
        page.bind(output.theme, at: "/theme")
        page.bind(output.themeLabel, at: "/themeLabel")
        page.route(output.route)
    }
}

/// Welcomes the user the router sent, and keeps the theme the settings page returns.
final class MainViewModel: ViewModel {
    /// The name shown when the page is opened without a user (not through `login`).
    static let anonymous = "guest"

    private let user: String
    private let themeCallbacks: Signal<Theme>

    init(context: UnitContext) {
        user = context.sentValue(as: String.self) ?? Self.anonymous
        themeCallbacks = context.callbacks(of: Theme.self)
    }

    func transform(_ input: MainInput) -> MainOutput {
        let user = self.user
        let theme = themeCallbacks.asDriver(startingWith: .light)
        let route = Signal.merge(
            input.openSettings.withLatestFrom(theme).map { Route.present(.settings, sending: $0) },
            input.logout.map { Route.root(.login) })
        return MainOutput(
            user: .just(user),
            welcome: .just("Welcome, \(user)"),
            theme: theme,
            themeLabel: theme.map { "Theme: \($0.rawValue)" },
            route: route)
    }
}

extension UnitCase {
    /// The page after login: `openSettings`, `logout`. Flow-only: only signing in reaches it (with the user), so a
    /// deep link to it cannot show a page that greets nobody.
    public static let main = UnitCase("main", view: MainView.self, viewModel: MainViewModel.self, entry: .flowOnly)
}
