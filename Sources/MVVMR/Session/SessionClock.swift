/// How a session's scheduler keeps time.
public enum SessionClock: Sendable, Hashable {
    /// Timers and async work run for real, in tasks that re-enter the session: production.
    case realTime
    /// Time moves only with `advanceTime(by:)`, async work runs only in `runPendingWork()`: tests.
    case virtual
}
