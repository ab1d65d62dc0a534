@testable import MVVMR

/// Collects what a stream emits, for operator tests.
final class Collector<Element> {
    var values: [Element] = []
    private(set) var subscription: Subscription = .empty

    init(_ signal: Signal<Element>) {
        subscription = signal.subscribe { [weak self] in self?.values.append($0) }
    }

    init(_ driver: Driver<Element>) {
        subscription = driver.subscribe { [weak self] in self?.values.append($0) }
    }

    func dispose() { subscription.dispose() }
}

extension Relay {
    /// How many observers the relay's signal has: 0 once everything downstream is torn down.
    var observerCount: Int { signal.node.observerCount }
}

extension DriverRelay {
    var observerCount: Int { driver.node.observerCount }
}
