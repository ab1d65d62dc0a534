import MVVMR

// The dashboard: a page made of three parts, each its own View/ViewModel pair mounted at a sub-path
// of the page: a clock ticking every second (`/clock`), a quote that `quote.shuffle` replaces by a
// random other one (`/quote`), and stats counting the ticks and the shuffles, zeroed by `stats.reset`
// (`/stats`). The parts meet through the `DashboardActivity` the page shares with them.
//
// View: {"clock": {"time": "14:03:07", "ticks": 12}, "quote": {"text": "…", "author": "…", "index": 3},
//        "stats": {"ticks": 12, "shuffles": 2}}

/// What the dashboard's parts have in common: one timer's ticks, and the quote's shuffles.
final class DashboardActivity {
    /// 0, 1, 2, … once a second: one timer, however many parts listen.
    let ticks: Signal<Int>
    /// Each shuffle of the quote.
    let shuffles = Relay<Void>()

    init(scheduler: Scheduler) { ticks = scheduler.interval(.seconds(1)) }
}

/// The dashboard page itself binds nothing: its parts do.
struct DashboardView: View {}

/// Shares a fresh `DashboardActivity` with the page's parts (bound after it).
final class DashboardViewModel: ViewModel {
    init(context: UnitContext) { context.share(DashboardActivity(scheduler: context.scheduler)) }
}

extension UnitCase {
    /// The dashboard, composed of the parts `clock`, `quote` and `stats`: `quote.shuffle`, `stats.reset`.
    public static let dashboard = UnitCase(
        "dashboard", view: DashboardView.self, viewModel: DashboardViewModel.self,
        parts: [UnitPart("clock", .dashboardClock), UnitPart("quote", .dashboardQuote), UnitPart("stats", .dashboardStats)])
}
