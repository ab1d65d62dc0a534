import MVVMR

// The dashboard's clock part: the UTC time of day, and how many seconds ticked since the page opened.
//
// View (at /clock): {"time": "14:03:07", "ticks": 12}

/// What the clock part shows.
struct DashboardClockState: Codable, Equatable, Sendable { var time: String, ticks = 0 }

/// Shows its state; it has no actions.
struct DashboardClockView: View { typealias Output = Driver<DashboardClockState> }

/// Ticks with the page's shared timer; the time is the wall clock when the page opened plus the
/// scheduler's time since then (virtual in tests).
final class DashboardClockViewModel: ViewModel {
    private let ticks: Signal<Int>, scheduler: Scheduler, openedAt: Int, openedOnScheduler: Duration

    init(context: UnitContext) throws {
        ticks = try context.shared(DashboardActivity.self).ticks
        // The session's wall clock (kept in its log, so a restored page shows the times it showed), unless a test
        // stops the clock with a `WallClock` service.
        openedAt = context.services[(any WallClock).self]?.secondsSince1970() ?? context.scheduler.secondsSince1970
        (scheduler, openedOnScheduler) = (context.scheduler, context.scheduler.now)
    }

    func transform(_ input: NoInput) -> Driver<DashboardClockState> {
        ticks.map { [self] tick in
            let elapsed = Int((scheduler.now - openedOnScheduler).components.seconds)
            return DashboardClockState(time: UTCDateTime(secondsSince1970: openedAt + elapsed).time, ticks: tick + 1)
        }
        .asDriver(startingWith: DashboardClockState(time: UTCDateTime(secondsSince1970: openedAt).time))
    }
}

extension UnitCase {
    /// The dashboard's clock part.
    public static let dashboardClock = UnitCase(
        "dashboardClock", view: DashboardClockView.self, viewModel: DashboardClockViewModel.self)
}
