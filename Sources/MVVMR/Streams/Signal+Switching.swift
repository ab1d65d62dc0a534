extension Signal {
    /// The events of the signal made from the latest event; each new event disposes the signal made
    /// from the one before, so its pending work (an async call, a timer) never emits.
    ///
    /// ```swift
    /// let results = input.query.flatMapLatest { query in
    ///     context.scheduler.perform { await search.results(for: query) }
    /// }
    /// ```
    /// - Parameter transform: makes the inner signal for an event.
    public func flatMapLatest<Result>(_ transform: @escaping (Element) -> Signal<Result>) -> Signal<Result> {
        Signal<Result>(connect: switchConnector(node) { transform($0).node })
    }

    /// The values of the driver made from the latest event; see `flatMapLatest(_:)` for signals.
    /// - Parameter transform: makes the inner driver for an event.
    public func flatMapLatest<Result>(_ transform: @escaping (Element) -> Driver<Result>) -> Signal<Result> {
        Signal<Result>(connect: switchConnector(node) { transform($0).node })
    }
}

extension Signal where Element: Sendable {
    /// The results of `work` run for the latest event, off the session's context; a newer event
    /// cancels the older work and a stale result is never emitted.
    ///
    /// The result re-enters the page's serial context before it is emitted, so what follows runs
    /// like any other event. In tests the work waits for the tester to run it.
    /// - Parameters:
    ///   - scheduler: the page's scheduler, from its `UnitContext`.
    ///   - work: the async Model call; it runs concurrently, so it and its result are `Sendable`.
    public func flatMapLatest<Result: Codable & Sendable>(
        on scheduler: Scheduler, _ work: @escaping @Sendable (Element) async -> Result
    ) -> Signal<Result> {
        flatMapLatest { element in scheduler.perform { await work(element) } }
    }
}

/// Subscribes to `source`; for each event, disposes the previous inner subscription and subscribes
/// to the node `makeInner` returns, forwarding its events.
func switchConnector<Element, Result>(
    _ source: StreamNode<Element>, _ makeInner: @escaping (Element) -> StreamNode<Result>
) -> (StreamNode<Result>) -> Subscription {
    { target in
        var inner: Subscription?
        // Counts switches so an inner node that emits synchronously while being replaced is ignored.
        var generation = 0
        let outer = source.subscribe { value in
            inner?.dispose()
            inner = nil
            generation &+= 1
            let current = generation
            let innerNode = makeInner(value)
            let subscription = innerNode.subscribe { result in
                if current == generation { target.emit(result) }
            }
            if current == generation { inner = subscription } else { subscription.dispose() }
        }
        return Subscription {
            outer.dispose()
            inner?.dispose()
            inner = nil
        }
    }
}
