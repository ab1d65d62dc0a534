import MVVMR
import Testing

/// Records what a `Signal` or `Driver` emits and makes the test assert all of it, in order: for tests
/// of a ViewModel's Output values without a page.
///
/// ```swift
/// let scheduler = Scheduler.virtual()
/// let viewModel = try SearchViewModel(context: UnitContext(unit: "search", scheduler: scheduler))
/// let query = Relay<String>()
/// let output = try viewModel.transform(SearchInput(query: query.signal))
/// let results = StreamRecorder(output.results)
/// results.expect([[]])                  // the driver's current value
/// query.accept("swift")
/// scheduler.advance(by: .milliseconds(300))
/// await scheduler.runPendingWork()
/// results.expect([["Swift"]])
/// ```
///
/// Values recorded and not expected by the time the recorder goes away (or `finish()`) are an issue.
public final class StreamRecorder<Element> {
    private var values: [Element] = []
    private var subscription: Subscription?
    private var isFinished = false

    /// Subscribes to `signal`.
    /// - Parameter signal: the stream to record.
    public init(_ signal: Signal<Element>) {
        subscription = nil
        subscription = signal.subscribe { [weak self] in self?.values.append($0) }
    }

    /// Subscribes to `driver`; its current value is the first recorded.
    /// - Parameter driver: the stream to record.
    public init(_ driver: Driver<Element>) {
        subscription = nil
        subscription = driver.subscribe { [weak self] in self?.values.append($0) }
    }

    deinit {
        subscription?.dispose()
        if !isFinished, !values.isEmpty {
            Issue.record("\(values.count) recorded value(s) never asserted: \(values)")
        }
    }

    /// The values recorded and not yet asserted.
    public var unasserted: [Element] { values }

    /// Stops recording; records an issue for values never asserted.
    /// - Parameter sourceLocation: where issues are reported.
    public func finish(sourceLocation: SourceLocation = #_sourceLocation) {
        isFinished = true
        subscription?.dispose()
        if !values.isEmpty {
            Issue.record("\(values.count) recorded value(s) never asserted: \(values)", sourceLocation: sourceLocation)
        }
        values = []
    }
}

extension StreamRecorder where Element: Equatable {
    /// Asserts that exactly `expected` was emitted since the last assertion, and forgets it.
    /// - Parameters:
    ///   - expected: the values, in order.
    ///   - sourceLocation: where issues are reported.
    public func expect(_ expected: [Element], sourceLocation: SourceLocation = #_sourceLocation) {
        if values != expected {
            Issue.record("expected \(expected), recorded \(values)", sourceLocation: sourceLocation)
        }
        values = []
    }
}

extension StreamRecorder where Element == Void {
    /// Asserts that exactly `count` events were emitted since the last assertion, and forgets them.
    /// - Parameters:
    ///   - count: how many events.
    ///   - sourceLocation: where issues are reported.
    public func expectEvents(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        if values.count != count {
            Issue.record("expected \(count) event(s), recorded \(values.count)", sourceLocation: sourceLocation)
        }
        values = []
    }
}
