// (Named MainPage.swift: a file named main.swift would make this target an executable.)

import MVVMR

// The page after login: welcomes the user sent by `login`, presents `settings` with the current
// theme, shows the theme settings returns, and makes `login` the root on logout.
//
// View: {"user": "david", "welcome": "Welcome, david", "theme": "light", "themeLabel": "Theme: light"}

/// What the main page shows.
struct MainState: Codable, Equatable, Sendable {
    var user: String, welcome: String, theme = Theme.light, themeLabel = "Theme: light"
}

/// The main page's actions.
enum MainAction: String, PageAction { case openSettings, logout }

/// What happens on the main page: the user's actions, and the theme settings returns.
enum MainEvent: Codable, Sendable { case openSettings, logout, themeChosen(Theme) }

/// Turns `openSettings` and `logout` into events; the state is bound whole.
struct MainView: View {
    typealias Output = StateOutput<MainState>
    func input(from actions: Actions<MainAction>) -> Signal<MainEvent> {
        .merge(actions.signal(.openSettings).map { .openSettings }, actions.signal(.logout).map { .logout })
    }
}

/// Welcomes the user, presents the settings with the current theme, and shows the theme they return.
final class MainViewModel: ViewModel {
    /// The user shown when `login` sent none.
    static let anonymous = "guest"
    private let reducer: StateReducer<MainState, MainEvent>
    private let themeCallbacks: Signal<Theme>, scheduler: Scheduler

    init(context: UnitContext) {
        let user = context.sentValue(as: String.self) ?? Self.anonymous
        reducer = StateReducer(MainState(user: user, welcome: "Welcome, \(user)"))
        (themeCallbacks, scheduler) = (context.callbacks(of: Theme.self), context.scheduler)
    }

    func transform(_ events: Signal<MainEvent>) -> StateOutput<MainState> {
        reducer.run(.merge(events, themeCallbacks.map(MainEvent.themeChosen)), on: scheduler) { state, event in
            switch event {
            case .openSettings: return .route(.present(.settings, sending: state.theme))
            case .logout: return .route(.root(.login))
            case .themeChosen(let theme): (state.theme, state.themeLabel) = (theme, "Theme: \(theme.rawValue)")
            }
            return .none
        }
    }
}

extension UnitCase {
    /// The page after login, reached only from it: `openSettings`, `logout`.
    public static let main = UnitCase("main", view: MainView.self, viewModel: MainViewModel.self, entry: .flowOnly)
}
