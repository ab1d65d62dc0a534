import MVVMR

// The settings page, presented by `main`: starts from the theme main sent; `theme` picks another,
// `done` goes back with the chosen theme as the callback value. A value that is not a theme name
// changes nothing (see `Theme.init(actionValue:)`).
//
// View: {"theme": "light", "themes": ["light", "dark"]}

/// The settings page's events.
struct SettingsInput {
    /// The user picks a theme.
    let theme: Signal<Theme>
    /// The user is done.
    let done: Signal<Void>
}

/// What the settings page shows, and where it navigates.
struct SettingsOutput {
    /// The theme picked.
    let theme: Driver<Theme>
    /// The themes to pick from.
    let themes: Driver<[Theme]>
    /// Back to the page below, returning the theme.
    let route: Signal<Route>
}

/// Declares `theme` (string) and `done`; writes `/theme` and `/themes`.
struct SettingsView: View {
    func input(from actions: Actions<NamedAction>) -> SettingsInput {
        SettingsInput(theme: actions.signal("theme", of: Theme.self), done: actions.signal("done"))
    }

    func bind(_ output: SettingsOutput, to page: Page) {
        page.bind(output.theme, at: "/theme")
        page.bind(output.themes, at: "/themes")
        page.route(output.route)
    }
}

/// Lets the user pick a theme and returns it to the page below. Restorable: its saved state is the theme picked.
final class SettingsViewModel: RestorableViewModel {
    private let initialTheme: Theme
    /// The theme picked last.
    private let picked: LatestState<Theme>

    init(context: UnitContext) {
        initialTheme = context.sentValue(as: Theme.self) ?? .light
        picked = LatestState(initialTheme)
    }

    init(context: UnitContext, restoring savedState: Theme) {
        initialTheme = savedState
        picked = LatestState(savedState)
    }

    /// The theme picked.
    var savedState: Theme? { picked.value }

    func transform(_ input: SettingsInput) -> SettingsOutput {
        let picked = self.picked
        let theme = input.theme.map { theme -> Theme in
            picked.value = theme
            return theme
        }.asDriver(startingWith: initialTheme)
        return SettingsOutput(
            theme: theme,
            themes: .just(Theme.allCases),
            route: input.done.withLatestFrom(theme).map { Route.back(returning: $0) })
    }
}

extension UnitCase {
    /// The settings page, presented by `main`: `theme` (string), `done`. Flow-only: it is presented by `main`,
    /// with its theme, and returns to it.
    public static let settings = UnitCase(
        "settings", view: SettingsView.self, viewModel: SettingsViewModel.self, entry: .flowOnly)
}
