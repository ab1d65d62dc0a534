extension Signal {
    /// Each event transformed by `transform`.
    /// - Parameter transform: turns an event into the new event.
    @inlinable
    public func map<Result>(_ transform: @escaping (Element) -> Result) -> Signal<Result> {
        let source = node
        return Signal<Result>(connect: { target in source.subscribe { target.emit(transform($0)) } })
    }

    /// The events for which `isIncluded` returns true.
    /// - Parameter isIncluded: decides whether an event passes.
    @inlinable
    public func filter(_ isIncluded: @escaping (Element) -> Bool) -> Signal<Element> {
        let source = node
        return Signal(connect: { target in
            source.subscribe { value in
                if isIncluded(value) { target.emit(value) }
            }
        })
    }

    /// The non-nil results of `transform`.
    /// - Parameter transform: turns an event into a new event, or nil to drop it.
    @inlinable
    public func compactMap<Result>(_ transform: @escaping (Element) -> Result?) -> Signal<Result> {
        let source = node
        return Signal<Result>(connect: { target in
            source.subscribe { value in
                if let result = transform(value) { target.emit(result) }
            }
        })
    }

    /// The running accumulation of events, emitted after each event.
    ///
    /// The accumulation starts from `initial` each time the signal is connected.
    /// - Parameters:
    ///   - initial: the accumulated value before the first event.
    ///   - accumulate: combines the accumulated value and an event into the next accumulated value.
    @inlinable
    public func scan<Accumulated>(
        _ initial: Accumulated, _ accumulate: @escaping (Accumulated, Element) -> Accumulated
    ) -> Signal<Accumulated> {
        let source = node
        return Signal<Accumulated>(connect: { target in
            var accumulated = initial
            return source.subscribe { value in
                accumulated = accumulate(accumulated, value)
                target.emit(accumulated)
            }
        })
    }

    /// This signal preceded by `values`, emitted when the signal is first connected.
    ///
    /// Signals are shared, so only the observers present at connection see the start values; use
    /// `asDriver(startingWith:)` for a value every observer sees.
    /// - Parameter values: the events to emit first.
    @inlinable
    public func startWith(_ values: Element...) -> Signal<Element> {
        let source = node
        return Signal(connect: { target in
            for value in values { target.emit(value) }
            return source.subscribe { target.emit($0) }
        })
    }

    /// The events that differ from the event before them, compared with `isEquivalent`.
    /// - Parameter isEquivalent: true when two consecutive events count as the same.
    @inlinable
    public func distinctUntilChanged(
        by isEquivalent: @escaping (Element, Element) -> Bool
    ) -> Signal<Element> {
        let source = node
        return Signal(connect: { target in
            var previous: Element?
            return source.subscribe { value in
                if let previous, isEquivalent(previous, value) { return }
                previous = value
                target.emit(value)
            }
        })
    }

    /// Every event replaced by `()`: for taps whose payload does not matter.
    @inlinable
    public func mapToVoid() -> Signal<Void> {
        map { _ in () }
    }
}

extension Signal where Element: Equatable {
    /// The events that differ from the event before them.
    @inlinable
    public func distinctUntilChanged() -> Signal<Element> {
        distinctUntilChanged(by: ==)
    }
}
