#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
import Locking

/// Runs the completions of the SQLite store's committed batches on a thread of its own, in the order the batches
/// were committed and each batch in queue order, so that the writer starts on its next batch at once: a batch's
/// completions (publishing events, sending answers) took as long as its commit, and every answer waited for both.
final class BatchCompleter: @unchecked Sendable {
    // @unchecked Sendable: everything shared is in `state`, a Monitor.

    /// A committed (or failed) batch and each of its requests' outcomes, in order.
    private struct Completed {
        let batch: [QueuedWrite]
        let outcomes: [Result<Void, SessionStoreError>]
    }

    private struct State {
        var completed: [Completed] = []
        var isClosing = false
        var thread: pthread_t?
    }

    private let state = Monitor(State())

    /// Starts the thread.
    func start() throws(SessionStoreError) {
        switch Threads.start({ self.run() }) {
        case .success(let thread): state.withLock { $0.thread = thread }
        case .failure(let error):
            throw SessionStoreError(.unavailable, "cannot start the completion thread: \(error)")
        }
    }

    /// Queues `batch`'s completions with their outcomes; they run after those of every batch handed over before.
    /// - Parameters:
    ///   - batch: the requests, in queue order.
    ///   - outcomes: each one's outcome, in the same order.
    func complete(_ batch: [QueuedWrite], with outcomes: [Result<Void, SessionStoreError>]) {
        let isFirst = state.withLock { state -> Bool in
            state.completed.append(Completed(batch: batch, outcomes: outcomes))
            return state.completed.count == 1
        }
        // Only an empty queue can have the thread asleep.
        if isFirst { state.signal() }
    }

    /// Whether the caller is this completer's thread (a completion is running).
    var isCurrentThread: Bool {
        guard let thread = state.withLock({ $0.thread }) else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    /// Runs what was handed over, then ends the thread and waits for it. Called from a completion (on the thread
    /// itself), it returns at once and the thread ends once it ran what was handed over.
    func close() {
        let (thread, isFirst) = state.withLock { state in
            defer { state.isClosing = true }
            return (state.thread, !state.isClosing)
        }
        state.broadcast()
        guard isFirst, let thread else { return }
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    private func run() {
        while true {
            let (completed, isClosing) = state.withLock(when: { $0.isClosing || !$0.completed.isEmpty }) {
                state -> ([Completed], Bool) in
                defer { state.completed = [] }
                return (state.completed, state.isClosing)
            }
            for each in completed {
                for (queued, outcome) in zip(each.batch, each.outcomes) {
                    queued.completion(outcome)
                }
            }
            if isClosing && completed.isEmpty { break }
        }
    }
}
