import MVVMR

// The settings page, presented by `main`: starts from the theme main sent; `theme` picks another,
// `done` goes back with the chosen theme as the callback value. A value that is not a theme name
// changes nothing (see `Theme.init(actionValue:)`).
//
// View: {"theme": "light", "themes": ["light", "dark"]}

/// What the settings page shows: the theme picked, and the themes to pick from.
struct SettingsState: Codable, Equatable, Sendable { var theme: Theme, themes = Theme.allCases }

/// The settings page's actions: `theme` (a theme's name) and `done`.
enum SettingsAction: String, PageAction { case theme, done }

/// What happens on the settings page.
enum SettingsEvent: Codable, Sendable { case theme(Theme), done }

/// Turns `theme` and `done` into events; the state is bound whole.
struct SettingsView: View {
    typealias Output = StateOutput<SettingsState>
    func input(from actions: Actions<SettingsAction>) -> Signal<SettingsEvent> {
        .merge(actions.signal(.theme, of: Theme.self).map(SettingsEvent.theme), actions.signal(.done).map { .done })
    }
}

/// Keeps the theme picked and returns it on `done`. Restorable: its saved state is its state.
final class SettingsViewModel: ReducerViewModel {
    let reducer: StateReducer<SettingsState, SettingsEvent>
    private let scheduler: Scheduler

    init(context: UnitContext, state: SettingsState?) {
        reducer = StateReducer(state ?? SettingsState(theme: context.sentValue(as: Theme.self) ?? .light))
        scheduler = context.scheduler
    }

    func transform(_ events: Signal<SettingsEvent>) -> StateOutput<SettingsState> {
        reducer.run(events, on: scheduler) { state, event in
            switch event {
            case .theme(let theme): state.theme = theme
            case .done: return .route(.back(returning: state.theme))
            }
            return .none
        }
    }
}

extension UnitCase {
    /// The settings page, reached only from `main`: `theme` (string), `done`.
    public static let settings = UnitCase(
        "settings", view: SettingsView.self, viewModel: SettingsViewModel.self, entry: .flowOnly)
}
