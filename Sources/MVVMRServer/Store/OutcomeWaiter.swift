import Locking

/// Lets a caller wait for an outcome that another thread delivers once (a queued write's completion).
final class OutcomeWaiter: Sendable {
    private let outcome = Monitor<Result<Void, SessionStoreError>?>(nil)

    /// Delivers the outcome and wakes the waiting caller.
    func complete(_ result: Result<Void, SessionStoreError>) {
        outcome.withLock { $0 = result }
        outcome.signal()
    }

    /// Waits until the outcome is delivered and returns it.
    func wait() -> Result<Void, SessionStoreError> {
        outcome.withLock(when: { $0 != nil }) { outcome in
            switch outcome {
            case .some(let result): return result
            case .none: return .failure(SessionStoreError(.unavailable, "no outcome"))  // not reached: waited for one
            }
        }
    }
}
