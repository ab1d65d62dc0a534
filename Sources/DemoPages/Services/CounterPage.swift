/// One page of counter rows, as the counters service returns it.
public struct CounterPage: Sendable, Hashable, Codable {
    /// The page's number, from 1.
    public let number: Int
    /// Its rows.
    public let rows: [CounterRow]
    /// Whether no page follows it.
    public let isLast: Bool

    /// A page.
    /// - Parameters:
    ///   - number: from 1.
    ///   - rows: its rows.
    ///   - isLast: whether no page follows it.
    public init(number: Int, rows: [CounterRow], isLast: Bool) {
        self.number = number
        self.rows = rows
        self.isLast = isLast
    }
}
