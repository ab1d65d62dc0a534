extension Scheduler {
    /// A signal that runs `work` off the session's context when subscribed and emits its result once,
    /// back inside the context. Disposing the subscription first cancels the work; its result is
    /// then never emitted.
    ///
    /// ```swift
    /// let people = input.refresh.flatMapLatest { _ in context.scheduler.perform { await directory.all() } }
    /// ```
    /// The result is `Codable`: it goes into the session's log, so that a session restored after a restart
    /// gets the same result without calling the Model again.
    /// - Parameter work: the async Model call; it runs concurrently, so it and its result are `Sendable`.
    public func perform<Result: Codable & Sendable>(_ work: @escaping @Sendable () async -> Result) -> Signal<Result> {
        Signal(connect: { [self] target in launch(work) { target.emit($0) } })
    }

    /// Like `perform(_:)` for work that throws: emits `.success` or `.failure` once. A failure is logged
    /// as its description and arrives as a ``RecordedError`` carrying it, live and after a restart alike.
    /// - Parameter work: the async Model call that may throw.
    public func performCatchingErrors<Success: Codable & Sendable>(
        _ work: @escaping @Sendable () async throws -> Success
    ) -> Signal<Result<Success, any Error>> {
        perform { () async -> RecordedOutcome<Success> in
            do { return .success(try await work()) } catch { return .failure(String(describing: error)) }
        }
        .map { outcome -> Result<Success, any Error> in
            switch outcome {
            case .success(let value): return .success(value)
            case .failure(let description): return .failure(RecordedError(description: description))
            }
        }
    }

    /// A signal that emits 0, 1, 2, … every `period`, starting one period after it is connected.
    /// - Parameter period: the time between events.
    public func interval(_ period: Duration) -> Signal<Int> {
        Signal(connect: { [self] target in
            var count = 0
            var timer: Subscription?
            func scheduleNext() {
                timer = schedule(after: period) {
                    let current = count
                    count += 1
                    scheduleNext()
                    target.emit(current)
                }
            }
            scheduleNext()
            return Subscription { timer?.dispose() }
        })
    }
}

/// The failure of an async job as its session's log keeps it: the error's description.
public struct RecordedError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What `String(describing:)` gave for the original error.
    public let description: String
}

/// How an async job that may throw ended, as it crosses into the session (and its log).
enum RecordedOutcome<Success: Codable & Sendable>: Codable, Sendable {
    case success(Success)
    case failure(String)
}
