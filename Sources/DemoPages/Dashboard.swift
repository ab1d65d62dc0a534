import MVVMR

// The dashboard: a page made of three parts, each its own View/ViewModel pair mounted at a sub-path
// of the page: a clock ticking every second (`/clock`), a quote that `quote.shuffle` replaces by a
// random other one (`/quote`), and stats counting the ticks and the shuffles, zeroed by `stats.reset`
// (`/stats`). The parts meet through the page's `DashboardActivity`.
//
// View: {"clock": {"time": "14:03:07", "ticks": 12}, "quote": {"text": "…", "author": "…", "index": 3},
//        "stats": {"ticks": 12, "shuffles": 2}}

/// The dashboard page itself: it only opens the activity its parts share.
struct DashboardView: View {}

/// Opens a fresh `DashboardActivity` for the page; bound before the parts, which join it.
final class DashboardViewModel: ViewModel {
    /// Held so the activity lives as long as the page.
    private let activity: DashboardActivity

    init(context: UnitContext) throws {
        activity = try context.services.require(DashboardActivities.self).open(for: context.scheduler)
    }
}

extension UnitCase {
    /// The dashboard, composed of the parts `clock`, `quote` and `stats`: `quote.shuffle`, `stats.reset`.
    public static let dashboard = UnitCase(
        "dashboard", view: DashboardView.self, viewModel: DashboardViewModel.self,
        parts: [
            UnitPart("clock", .dashboardClock), UnitPart("quote", .dashboardQuote), UnitPart("stats", .dashboardStats),
        ])
}
