import MVVMR

// The dashboard's clock part: the UTC time of day, and how many seconds ticked since the page opened.
//
// View (at /clock): {"time": "14:03:07", "ticks": 12}

/// What the clock part shows.
struct DashboardClockOutput {
    /// The time of day, UTC, `HH:MM:SS`.
    let time: Driver<String>
    /// The ticks since the page opened.
    let ticks: Driver<Int>
}

/// Writes `/time` and `/ticks` of its mount path.
struct DashboardClockView: View {
    func bind(_ output: DashboardClockOutput, to page: Page) {
        page.bind(output.time, at: "/time")
        page.bind(output.ticks, at: "/ticks")
    }
}

/// Ticks with the page's shared timer; the time is the wall clock when the page opened plus the
/// scheduler's time since then (virtual in tests).
final class DashboardClockViewModel: ViewModel {
    private let activity: DashboardActivity
    private let scheduler: Scheduler
    private let openedAt: Int
    private let openedOnScheduler: Duration

    init(context: UnitContext) throws {
        activity = try context.services.require(DashboardActivities.self).current(for: context.scheduler)
        // The session's wall clock (kept in its log, so a restored page shows the times it showed), unless a test
        // stops the clock with a `WallClock` service.
        openedAt = context.services[(any WallClock).self]?.secondsSince1970() ?? context.scheduler.secondsSince1970
        scheduler = context.scheduler
        openedOnScheduler = context.scheduler.now
    }

    func transform(_ input: NoInput) -> DashboardClockOutput {
        let scheduler = self.scheduler
        let openedAt = self.openedAt
        let openedOnScheduler = self.openedOnScheduler
        let ticks = activity.ticks.map { $0 + 1 }
        let time = ticks.map { _ in
            Self.timeOfDay(openedAt + Int((scheduler.now - openedOnScheduler).components.seconds))
        }
        return DashboardClockOutput(
            time: time.asDriver(startingWith: Self.timeOfDay(openedAt)),
            ticks: ticks.asDriver(startingWith: 0))
    }

    /// `HH:MM:SS` of an instant, UTC.
    /// - Parameter secondsSince1970: whole seconds since 1970-01-01 00:00:00 UTC.
    static func timeOfDay(_ secondsSince1970: Int) -> String {
        let secondsOfDay = ((secondsSince1970 % 86_400) + 86_400) % 86_400
        func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(twoDigits(secondsOfDay / 3_600)):\(twoDigits(secondsOfDay / 60 % 60)):\(twoDigits(secondsOfDay % 60))"
    }
}

extension UnitCase {
    /// The dashboard's clock part.
    public static let dashboardClock = UnitCase(
        "dashboardClock", view: DashboardClockView.self, viewModel: DashboardClockViewModel.self)
}
