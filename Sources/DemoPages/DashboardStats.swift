import MVVMR

// The dashboard's stats part: counts the clock's ticks and the quote's shuffles since the page opened
// or since the last `reset`.
//
// View (at /stats): {"ticks": 12, "shuffles": 2}

/// The counts of the stats part.
struct DashboardStatsState: Codable, Equatable, Sendable { var ticks = 0, shuffles = 0 }

/// The stats part's action (`stats.reset` on the page).
enum DashboardStatsAction: String, PageAction { case reset }

/// What the stats part counts: a tick, a shuffle, or the user's reset.
enum DashboardStatsEvent { case tick, shuffle, reset }

/// Declares `reset`; shows its state.
struct DashboardStatsView: View {
    typealias Output = StateOutput<DashboardStatsState>
    func input(from actions: Actions<DashboardStatsAction>) -> Signal<Void> { actions.signal(.reset) }
}

/// Counts what the page's activity reports.
final class DashboardStatsViewModel: ViewModel {
    private let activity: DashboardActivity
    private let reducer = StateReducer<DashboardStatsState, DashboardStatsEvent>(DashboardStatsState())

    init(context: UnitContext) throws { activity = try context.shared(DashboardActivity.self) }

    func transform(_ reset: Signal<Void>) -> StateOutput<DashboardStatsState> {
        let events = Signal.merge(
            activity.ticks.map { _ in DashboardStatsEvent.tick }, activity.shuffles.signal.map { .shuffle }, reset.map { .reset })
        return reducer.run(events) { state, event in
            switch event {
            case .tick: state.ticks += 1
            case .shuffle: state.shuffles += 1
            case .reset: state = DashboardStatsState()
            }
        }
    }
}

extension UnitCase {
    /// The dashboard's stats part: `reset`.
    public static let dashboardStats = UnitCase(
        "dashboardStats", view: DashboardStatsView.self, viewModel: DashboardStatsViewModel.self)
}
