extension Signal {
    /// The events of all `signals`, in the order they happen.
    /// - Parameter signals: the signals to interleave.
    public static func merge(_ signals: Signal<Element>...) -> Signal<Element> {
        merge(signals)
    }

    /// The events of all `signals`, in the order they happen.
    /// - Parameter signals: the signals to interleave.
    public static func merge(_ signals: [Signal<Element>]) -> Signal<Element> {
        let sources = signals.map(\.node)
        return Signal(connect: { target in
            let subscriptions = sources.map { source in source.subscribe { target.emit($0) } }
            return Subscription { for subscription in subscriptions { subscription.dispose() } }
        })
    }

    /// This signal's events together with `other`'s; see `merge(_:)`.
    /// - Parameter other: the signal to interleave with this one.
    public func merge(with other: Signal<Element>) -> Signal<Element> {
        Signal.merge(self, other)
    }

    /// Pairs of the latest events of both signals, emitted whenever either emits once both have.
    /// - Parameters:
    ///   - first: the first signal.
    ///   - second: the second signal.
    public static func combineLatest<First, Second>(
        _ first: Signal<First>, _ second: Signal<Second>
    ) -> Signal<(First, Second)> where Element == (First, Second) {
        Signal(connect: combineLatestConnector(first.node, second.node))
    }

    /// Each event combined with the latest value of `driver`.
    /// - Parameters:
    ///   - driver: the driver whose current value is read at each event.
    ///   - combine: makes the new event from this event and the driver's value.
    public func withLatestFrom<Value, Result>(
        _ driver: Driver<Value>, _ combine: @escaping (Element, Value) -> Result
    ) -> Signal<Result> {
        withLatest(from: driver.node, combine)
    }

    /// The latest value of `driver` at each event of this signal.
    /// - Parameter driver: the driver whose current value is read at each event.
    public func withLatestFrom<Value>(_ driver: Driver<Value>) -> Signal<Value> {
        withLatest(from: driver.node) { _, value in value }
    }

    /// Each event combined with the latest event of `other`; events before `other` first emits are
    /// dropped.
    /// - Parameters:
    ///   - other: the signal whose latest event is read at each event.
    ///   - combine: makes the new event from this event and the other's latest.
    public func withLatestFrom<Value, Result>(
        _ other: Signal<Value>, _ combine: @escaping (Element, Value) -> Result
    ) -> Signal<Result> {
        withLatest(from: other.node, combine)
    }

    /// The latest event of `other` at each event of this signal.
    /// - Parameter other: the signal whose latest event is read at each event.
    public func withLatestFrom<Value>(_ other: Signal<Value>) -> Signal<Value> {
        withLatest(from: other.node) { _, value in value }
    }

    private func withLatest<Value, Result>(
        from other: StreamNode<Value>, _ combine: @escaping (Element, Value) -> Result
    ) -> Signal<Result> {
        let source = node
        return Signal<Result>(connect: { target in
            var latest: Value?
            // Subscribe to the sampled stream first so a driver's current value is known before
            // the first event arrives.
            let sampled = other.subscribe { latest = $0 }
            let events = source.subscribe { value in
                if let latest { target.emit(combine(value, latest)) }
            }
            return Subscription {
                events.dispose()
                sampled.dispose()
            }
        })
    }
}

/// Subscribes to two nodes and emits the pair of their latest values once both have one.
func combineLatestConnector<First, Second>(
    _ first: StreamNode<First>, _ second: StreamNode<Second>
) -> (StreamNode<(First, Second)>) -> Subscription {
    { target in
        var latestFirst: First?
        var latestSecond: Second?
        let firstSubscription = first.subscribe { value in
            latestFirst = value
            if let latestSecond { target.emit((value, latestSecond)) }
        }
        let secondSubscription = second.subscribe { value in
            latestSecond = value
            if let latestFirst { target.emit((latestFirst, value)) }
        }
        return Subscription {
            firstSubscription.dispose()
            secondSubscription.dispose()
        }
    }
}

/// Subscribes to every node and emits the array of their latest values once all have one.
func combineLatestConnector<Value>(_ sources: [StreamNode<Value>]) -> (StreamNode<[Value]>) -> Subscription {
    { target in
        var latest = [Value?](repeating: nil, count: sources.count)
        var missing = sources.count
        var subscriptions: [Subscription] = []
        subscriptions.reserveCapacity(sources.count)
        for (index, source) in sources.enumerated() {
            subscriptions.append(
                source.subscribe { value in
                    if latest[index] == nil { missing -= 1 }
                    latest[index] = value
                    if missing == 0 { target.emit(latest.compactMap { $0 }) }
                })
        }
        if sources.isEmpty { target.emit([]) }
        return Subscription { for subscription in subscriptions { subscription.dispose() } }
    }
}
