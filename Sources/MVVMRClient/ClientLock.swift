import Foundation

/// A value behind a lock: the one piece of mutable state a ``PageClient`` shares between tasks.
///
/// `NSLock` rather than `Synchronization.Mutex`, so the client also builds for older Apple OS versions.
final class ClientLock<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with exclusive access to the state.
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
