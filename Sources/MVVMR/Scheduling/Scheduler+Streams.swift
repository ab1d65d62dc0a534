extension Scheduler {
    /// A signal that runs `work` off the session's context when subscribed and emits its result once,
    /// back inside the context. Disposing the subscription first cancels the work; its result is
    /// then never emitted.
    ///
    /// ```swift
    /// let people = input.refresh.flatMapLatest { _ in context.scheduler.perform { await directory.all() } }
    /// ```
    /// - Parameter work: the async Model call; it runs concurrently, so it and its result are `Sendable`.
    public func perform<Result: Sendable>(_ work: @escaping @Sendable () async -> Result) -> Signal<Result> {
        Signal(connect: { [self] target in launch(work) { target.emit($0) } })
    }

    /// Like `perform(_:)` for work that throws: emits `.success` or `.failure` once.
    /// - Parameter work: the async Model call that may throw.
    public func performCatchingErrors<Success: Sendable>(
        _ work: @escaping @Sendable () async throws -> Success
    ) -> Signal<Result<Success, any Error>> {
        perform {
            do { return .success(try await work()) } catch { return .failure(error) }
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
