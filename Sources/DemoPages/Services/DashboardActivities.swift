import MVVMR
import Synchronization

/// Hands the parts of one dashboard page the same `DashboardActivity`, keyed by the session's
/// scheduler: a session has at most one dashboard page, and binds its ViewModels in order (the page's
/// own first, then its parts), so the page opens a fresh activity and its parts join it.
///
/// Activities are held weakly: one lives as long as the ViewModels of its page.
public final class DashboardActivities: Sendable {
    private struct Entry {
        weak var activity: DashboardActivity?
    }

    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    /// An empty registry; register one per app.
    public init() {}

    /// How many activities are alive (for tests of their lifetime).
    public var liveCount: Int {
        entries.withLock { entries in entries.values.filter { $0.activity != nil }.count }
    }

    /// A fresh activity for the page being bound on `scheduler`'s session, replacing an older one.
    /// - Parameter scheduler: the session's scheduler, from the page's context.
    func open(for scheduler: Scheduler) -> DashboardActivity {
        let activity = DashboardActivity(scheduler: scheduler)
        let key = ObjectIdentifier(scheduler)
        entries.withLock { entries in
            entries = entries.filter { $0.value.activity != nil }
            entries[key] = Entry(activity: activity)
        }
        return activity
    }

    /// The activity of the page being bound on `scheduler`'s session; a fresh one when a part is bound
    /// on its own.
    /// - Parameter scheduler: the session's scheduler, from the part's context.
    func current(for scheduler: Scheduler) -> DashboardActivity {
        let key = ObjectIdentifier(scheduler)
        if let existing = entries.withLock({ $0[key]?.activity }) { return existing }
        return open(for: scheduler)
    }
}
