import MVVMR

/// What the parts of one dashboard page share: one ticking timer that the clock part shows and the
/// stats part counts, and the shuffles the quote part reports for the stats part to count.
///
/// Parts of a page share the page's `UnitContext` but no streams, so they meet here; one activity
/// serves one dashboard page, handed out by `DashboardActivities`.
final class DashboardActivity: @unchecked Sendable {
    // @unchecked Sendable: only the session whose scheduler keys it touches it, inside that session's lock.

    /// The period of the clock.
    static let tickPeriod: Duration = .seconds(1)

    /// 0, 1, 2, … every second from the first subscription; one shared timer for every part.
    let ticks: Signal<Int>
    /// One event per shuffle of the quote part.
    let shuffles = Relay<Void>()

    /// An activity whose timer runs on `scheduler`.
    /// - Parameter scheduler: the session's scheduler.
    init(scheduler: Scheduler) {
        ticks = scheduler.interval(Self.tickPeriod)
    }
}
