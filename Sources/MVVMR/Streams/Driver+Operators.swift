extension Driver {
    /// The current value and each change transformed by `transform`.
    /// - Parameter transform: turns a value into the new value.
    @inlinable
    public func map<Result>(_ transform: @escaping (Element) -> Result) -> Driver<Result> {
        let source = node
        return Driver<Result>(connect: { target in source.subscribe { target.emit(transform($0)) } })
    }

    /// This driver without consecutive values that `isEquivalent` calls the same.
    /// - Parameter isEquivalent: true when two consecutive values count as the same.
    @inlinable
    public func distinctUntilChanged(
        by isEquivalent: @escaping (Element, Element) -> Bool
    ) -> Driver<Element> {
        let source = node
        return Driver(connect: { target in
            var previous: Element?
            return source.subscribe { value in
                if let previous, isEquivalent(previous, value) { return }
                previous = value
                target.emit(value)
            }
        })
    }

    /// The value of the driver made from this driver's latest value; a new value disposes the
    /// driver made from the one before.
    /// - Parameter transform: makes the inner driver for a value.
    public func flatMapLatest<Result>(_ transform: @escaping (Element) -> Driver<Result>) -> Driver<Result> {
        Driver<Result>(connect: switchConnector(node) { transform($0).node })
    }

    /// Pairs of the current values of two drivers, updated whenever either changes.
    /// - Parameters:
    ///   - first: the first driver.
    ///   - second: the second driver.
    public static func combineLatest<First, Second>(
        _ first: Driver<First>, _ second: Driver<Second>
    ) -> Driver<(First, Second)> where Element == (First, Second) {
        Driver(connect: combineLatestConnector(first.node, second.node))
    }

    /// Triples of the current values of three drivers, updated whenever any changes.
    /// - Parameters:
    ///   - first: the first driver.
    ///   - second: the second driver.
    ///   - third: the third driver.
    public static func combineLatest<First, Second, Third>(
        _ first: Driver<First>, _ second: Driver<Second>, _ third: Driver<Third>
    ) -> Driver<(First, Second, Third)> where Element == (First, Second, Third) {
        Driver<((First, Second), Third)>(
            connect: combineLatestConnector(
                Driver<(First, Second)>.combineLatest(first, second).node, third.node)
        ).map { ($0.0.0, $0.0.1, $0.1) }
    }

    /// The array of the current values of `drivers`, updated whenever any changes.
    /// - Parameter drivers: the drivers to combine; none gives a driver of `[]`.
    public static func combineLatest<Value>(_ drivers: [Driver<Value>]) -> Driver<[Value]>
    where Element == [Value] {
        Driver(connect: combineLatestConnector(drivers.map(\.node)))
    }
}

extension Driver where Element: Equatable {
    /// This driver without consecutive equal values.
    @inlinable
    public func distinctUntilChanged() -> Driver<Element> {
        distinctUntilChanged(by: ==)
    }
}
