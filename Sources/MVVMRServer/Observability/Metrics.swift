import Locking

import Synchronization

/// One label combination's count: an atomic `Double` (its bit pattern), so adding to it takes no lock.
final class CounterCell: Sendable {
    private let bits = Atomic<UInt64>(0)

    /// Adds `amount` (a compare-and-exchange loop on the bit pattern).
    func add(_ amount: Double) {
        var current = bits.load(ordering: .relaxed)
        while true {
            let next = (Double(bitPattern: current) + amount).bitPattern
            let (exchanged, original) = bits.compareExchange(
                expected: current, desired: next, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// The count.
    var value: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }
}

/// One label combination of a ``Counter``, looked up once: incrementing it takes no lock and no lookup.
public struct CounterSeries: Sendable {
    let cell: CounterCell

    /// Adds to the count.
    /// - Parameter amount: how much to add (1 by default).
    public func increment(by amount: Double = 1) {
        cell.add(amount)
    }
}

/// A monotonically increasing count, optionally split by labels.
public final class Counter: Sendable {
    /// The metric's name.
    public let name: String
    /// Its help text.
    public let help: String
    /// The names of its labels, in order.
    public let labelNames: [String]
    private let cells = Locked<[[String]: CounterCell]>([:])

    init(name: String, help: String, labelNames: [String]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
    }

    /// The series of one label combination, for a caller that counts it often. A series never incremented
    /// is not rendered.
    /// - Parameter labels: the label values, in the order of ``labelNames``.
    public func series(_ labels: [String] = []) -> CounterSeries {
        CounterSeries(cell: cell(labels))
    }

    /// Adds to the count of one label combination.
    /// - Parameters:
    ///   - labels: the label values, in the order of ``labelNames``.
    ///   - amount: how much to add (1 by default).
    public func increment(_ labels: [String] = [], by amount: Double = 1) {
        cell(labels).add(amount)
    }

    /// The current count of one label combination.
    /// - Parameter labels: the label values.
    /// - Returns: the count (0 when never incremented).
    public func value(_ labels: [String] = []) -> Double {
        cells.withLock { $0[labels] }?.value ?? 0
    }

    private func cell(_ labels: [String]) -> CounterCell {
        cells.withLock { cells in
            if let cell = cells[labels] { return cell }
            let cell = CounterCell()
            cells[labels] = cell
            return cell
        }
    }

    func render(into text: inout String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
        let snapshot = cells.withLock { $0 }
        for (labels, cell) in snapshot.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let value = cell.value
            if value == 0 { continue }  // made by `series` and never incremented
            text += "\(name)\(MetricsRegistry.labelText(labelNames, labels)) \(MetricsRegistry.number(value))\n"
        }
    }
}

/// One atomic count of observations (a bucket's).
final class AtomicCount: Sendable {
    private let count = Atomic<UInt64>(0)

    /// Adds one.
    func increment() { count.add(1, ordering: .relaxed) }

    /// The count.
    var value: UInt64 { count.load(ordering: .relaxed) }
}

/// One label combination's buckets and sum, each atomic, so that observing takes no lock: every action of a unit
/// observes the same series, from every request thread.
final class HistogramCell: Sendable {
    /// What a series holds at one moment, as rendered.
    struct Series {
        var bucketCounts: [UInt64]
        var sum: Double
        /// The observations: the buckets' total (the `+Inf` bucket), so that the two always agree.
        var count: UInt64 { bucketCounts.reduce(0, +) }
    }

    /// One count per bucket bound and one past the last (`+Inf`).
    private let buckets: [AtomicCount]
    private let sum = CounterCell()

    init(bucketCount: Int) {
        buckets = (0...bucketCount).map { _ in AtomicCount() }
    }

    func record(_ value: Double, inBucket bucketIndex: Int) {
        buckets[min(max(0, bucketIndex), buckets.count - 1)].increment()
        sum.add(value)
    }

    /// The buckets (the last one past every bound) and the sum, read one after the other: an observation made
    /// meanwhile may be in the one and not yet in the other.
    var series: Series { Series(bucketCounts: buckets.map(\.value), sum: sum.value) }
}

/// One label combination of a ``Histogram``, looked up once: observing it takes no lock and no lookup.
public struct HistogramSeries: Sendable {
    let cell: HistogramCell
    let bucketBounds: [Double]

    /// Records one observation.
    /// - Parameter value: the observed value.
    public func observe(_ value: Double) {
        cell.record(value, inBucket: bucketBounds.firstIndex { value <= $0 } ?? bucketBounds.count)
    }
}

/// Observations counted into buckets (with their sum and count), optionally split by labels.
public final class Histogram: Sendable {
    /// The metric's name.
    public let name: String
    /// Its help text.
    public let help: String
    /// The names of its labels, in order.
    public let labelNames: [String]
    /// The buckets' upper bounds, ascending (`+Inf` is implied).
    public let bucketBounds: [Double]
    private let cells = Locked<[[String]: HistogramCell]>([:])

    init(name: String, help: String, labelNames: [String], bucketBounds: [Double]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.bucketBounds = bucketBounds.sorted()
    }

    /// The series of one label combination, for a caller that observes it often. A series without
    /// observations is not rendered.
    /// - Parameter labels: the label values.
    public func series(_ labels: [String] = []) -> HistogramSeries {
        HistogramSeries(cell: cell(labels), bucketBounds: bucketBounds)
    }

    /// Records one observation.
    /// - Parameters:
    ///   - value: the observed value.
    ///   - labels: the label values.
    public func observe(_ value: Double, _ labels: [String] = []) {
        series(labels).observe(value)
    }

    /// The number of observations of one label combination.
    /// - Parameter labels: the label values.
    /// - Returns: the count.
    public func count(_ labels: [String] = []) -> UInt64 {
        cells.withLock { $0[labels] }?.series.count ?? 0
    }

    private func cell(_ labels: [String]) -> HistogramCell {
        cells.withLock { cells in
            if let cell = cells[labels] { return cell }
            let cell = HistogramCell(bucketCount: bucketBounds.count)
            cells[labels] = cell
            return cell
        }
    }

    func render(into text: inout String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        let snapshot = cells.withLock { $0 }
        for (labels, cell) in snapshot.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let entry = cell.series
            if entry.count == 0 { continue }  // made by `series` and never observed
            var cumulative: UInt64 = 0
            for (index, bound) in bucketBounds.enumerated() {
                cumulative += entry.bucketCounts[index]
                text += "\(name)_bucket\(MetricsRegistry.labelText(labelNames + ["le"], labels + [MetricsRegistry.number(bound)])) \(cumulative)\n"
            }
            text += "\(name)_bucket\(MetricsRegistry.labelText(labelNames + ["le"], labels + ["+Inf"])) \(entry.count)\n"
            text += "\(name)_sum\(MetricsRegistry.labelText(labelNames, labels)) \(MetricsRegistry.number(entry.sum))\n"
            text += "\(name)_count\(MetricsRegistry.labelText(labelNames, labels)) \(entry.count)\n"
        }
    }
}

/// The server's metrics, rendered in the Prometheus text exposition format (version 0.0.4).
public final class MetricsRegistry: Sendable {
    private enum Metric: Sendable {
        case counter(Counter)
        case histogram(Histogram)
        case gauge(name: String, help: String, read: @Sendable () -> Double)
        /// A count kept elsewhere (read when rendered): a counter, for what only grows.
        case readCounter(name: String, help: String, read: @Sendable () -> Double)
    }

    private let metrics = Locked<[Metric]>([])

    /// Creates an empty registry.
    public init() {}

    /// Registers a counter.
    /// - Parameters:
    ///   - name: the metric name (`mvvmr_actions_total`).
    ///   - help: what it counts.
    ///   - labelNames: its labels.
    /// - Returns: the counter.
    public func counter(_ name: String, help: String, labelNames: [String] = []) -> Counter {
        let counter = Counter(name: name, help: help, labelNames: labelNames)
        metrics.withLock { $0.append(.counter(counter)) }
        return counter
    }

    /// Registers a histogram.
    /// - Parameters:
    ///   - name: the metric name.
    ///   - help: what it observes.
    ///   - labelNames: its labels.
    ///   - buckets: the buckets' upper bounds.
    /// - Returns: the histogram.
    public func histogram(_ name: String, help: String, labelNames: [String] = [], buckets: [Double]) -> Histogram {
        let histogram = Histogram(name: name, help: help, labelNames: labelNames, bucketBounds: buckets)
        metrics.withLock { $0.append(.histogram(histogram)) }
        return histogram
    }

    /// Registers a gauge read when the metrics are rendered.
    /// - Parameters:
    ///   - name: the metric name.
    ///   - help: what it measures.
    ///   - read: returns the current value.
    public func gauge(_ name: String, help: String, read: @escaping @Sendable () -> Double) {
        metrics.withLock { $0.append(.gauge(name: name, help: help, read: read)) }
    }

    /// Registers a counter whose value is read from `read` each time the metrics are rendered: a count kept
    /// elsewhere, that only grows.
    /// - Parameters:
    ///   - name: the metric name (ending in `_total`).
    ///   - help: what it counts.
    ///   - read: returns the count now.
    public func counter(_ name: String, help: String, read: @escaping @Sendable () -> Double) {
        metrics.withLock { $0.append(.readCounter(name: name, help: help, read: read)) }
    }

    /// Every metric in the text exposition format.
    public func render() -> String {
        let all = metrics.withLock { $0 }
        var text = ""
        for metric in all {
            switch metric {
            case .counter(let counter): counter.render(into: &text)
            case .histogram(let histogram): histogram.render(into: &text)
            case .gauge(let name, let help, let read):
                text += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n\(name) \(number(read()))\n"
            case .readCounter(let name, let help, let read):
                text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(number(read()))\n"
            }
        }
        return text
    }

    private func number(_ value: Double) -> String { Self.number(value) }

    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    static func labelText(_ names: [String], _ values: [String]) -> String {
        guard !names.isEmpty else { return "" }
        var parts: [String] = []
        for (index, name) in names.enumerated() {
            let value = index < values.count ? values[index] : ""
            var escaped = ""
            for character in value {
                switch character {
                case "\\": escaped += "\\\\"
                case "\"": escaped += "\\\""
                case "\n": escaped += "\\n"
                default: escaped.append(character)
                }
            }
            parts.append("\(name)=\"\(escaped)\"")
        }
        return "{" + parts.joined(separator: ",") + "}"
    }
}
