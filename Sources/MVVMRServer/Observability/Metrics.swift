import Locking

/// A monotonically increasing count, optionally split by labels.
public final class Counter: Sendable {
    /// The metric's name.
    public let name: String
    /// Its help text.
    public let help: String
    /// The names of its labels, in order.
    public let labelNames: [String]
    private let values = Locked<[[String]: Double]>([:])

    init(name: String, help: String, labelNames: [String]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
    }

    /// Adds to the count of one label combination.
    /// - Parameters:
    ///   - labels: the label values, in the order of ``labelNames``.
    ///   - amount: how much to add (1 by default).
    public func increment(_ labels: [String] = [], by amount: Double = 1) {
        values.withLock { $0[labels, default: 0] += amount }
    }

    /// The current count of one label combination.
    /// - Parameter labels: the label values.
    /// - Returns: the count (0 when never incremented).
    public func value(_ labels: [String] = []) -> Double {
        values.withLock { $0[labels] ?? 0 }
    }

    func render(into text: inout String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
        let snapshot = values.withLock { $0 }
        for (labels, value) in snapshot.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            text += "\(name)\(MetricsRegistry.labelText(labelNames, labels)) \(MetricsRegistry.number(value))\n"
        }
    }
}

/// Observations counted into buckets (with their sum and count), optionally split by labels.
public final class Histogram: Sendable {
    private struct Series {
        var bucketCounts: [UInt64]
        var sum: Double = 0
        var count: UInt64 = 0

        mutating func record(_ value: Double, inBucket bucketIndex: Int) {
            if bucketIndex < bucketCounts.count { bucketCounts[bucketIndex] += 1 }
            sum += value
            count += 1
        }
    }

    /// The metric's name.
    public let name: String
    /// Its help text.
    public let help: String
    /// The names of its labels, in order.
    public let labelNames: [String]
    /// The buckets' upper bounds, ascending (`+Inf` is implied).
    public let bucketBounds: [Double]
    private let series = Locked<[[String]: Series]>([:])

    init(name: String, help: String, labelNames: [String], bucketBounds: [Double]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.bucketBounds = bucketBounds.sorted()
    }

    /// Records one observation.
    /// - Parameters:
    ///   - value: the observed value.
    ///   - labels: the label values.
    public func observe(_ value: Double, _ labels: [String] = []) {
        let bucketCount = bucketBounds.count
        let bucketIndex = bucketBounds.firstIndex { value <= $0 } ?? bucketCount
        series.withLock { all in
            // Mutated in place: a copy taken out and written back would share its bucket array with the
            // dictionary's and copy it on every observation.
            all[labels, default: Series(bucketCounts: [UInt64](repeating: 0, count: bucketCount))]
                .record(value, inBucket: bucketIndex)
        }
    }

    /// The number of observations of one label combination.
    /// - Parameter labels: the label values.
    /// - Returns: the count.
    public func count(_ labels: [String] = []) -> UInt64 {
        series.withLock { $0[labels]?.count ?? 0 }
    }

    func render(into text: inout String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        let snapshot = series.withLock { $0 }
        for (labels, entry) in snapshot.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
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
