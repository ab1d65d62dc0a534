import MVVMR

// The dashboard's stats part: counts the clock's ticks and the quote's shuffles since the page opened
// or since the last `reset`.
//
// View (at /stats): {"ticks": 12, "shuffles": 2}

/// The counts of the stats part.
struct DashboardStatsCounts: Hashable {
    /// Ticks of the clock.
    var ticks = 0
    /// Shuffles of the quote.
    var shuffles = 0
}

/// What the stats part counts.
enum DashboardStatsEvent {
    /// The clock ticked.
    case tick
    /// The quote was shuffled.
    case shuffle
    /// The user zeroes the counts.
    case reset
}

/// The stats part's events.
struct DashboardStatsInput {
    /// The user zeroes the counts.
    let reset: Signal<Void>
}

/// What the stats part shows.
struct DashboardStatsOutput {
    /// Ticks counted.
    let ticks: Driver<Int>
    /// Shuffles counted.
    let shuffles: Driver<Int>
}

/// Declares `reset` (`stats.reset` on the page); writes `/ticks` and `/shuffles`.
struct DashboardStatsView: View {
    func input(from actions: Actions<NamedAction>) -> DashboardStatsInput {
        DashboardStatsInput(reset: actions.signal("reset"))
    }

    func bind(_ output: DashboardStatsOutput, to page: Page) {
        page.bind(output.ticks, at: "/ticks")
        page.bind(output.shuffles, at: "/shuffles")
    }
}

/// Counts what the page's activity reports.
final class DashboardStatsViewModel: ViewModel {
    private let activity: DashboardActivity

    init(context: UnitContext) throws {
        activity = try context.services.require(DashboardActivities.self).current(for: context.scheduler)
    }

    func transform(_ input: DashboardStatsInput) -> DashboardStatsOutput {
        let events = Signal.merge(
            activity.ticks.map { _ in DashboardStatsEvent.tick },
            activity.shuffles.signal.map { DashboardStatsEvent.shuffle },
            input.reset.map { DashboardStatsEvent.reset })
        let counts = events.scan(DashboardStatsCounts()) { counts, event in
            var next = counts
            switch event {
            case .tick: next.ticks += 1
            case .shuffle: next.shuffles += 1
            case .reset: next = DashboardStatsCounts()
            }
            return next
        }
        .asDriver(startingWith: DashboardStatsCounts())
        return DashboardStatsOutput(ticks: counts.map(\.ticks), shuffles: counts.map(\.shuffles))
    }
}

extension UnitCase {
    /// The dashboard's stats part: `reset`.
    public static let dashboardStats = UnitCase(
        "dashboardStats", view: DashboardStatsView.self, viewModel: DashboardStatsViewModel.self)
}
