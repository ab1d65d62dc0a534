import JSONPatch
import MVVMR

/// One row of the counters page: identified by `id`, so the page diffs the rows by identity.
public struct CounterRow: Sendable, Hashable, Codable, JSONRepresentable {
    /// The row's id, unique across pages.
    public let id: Int
    /// The row's label, "Row 7".
    public let title: String
    /// How many times the row was incremented.
    public var count: Int

    /// A row.
    /// - Parameters:
    ///   - id: unique across pages.
    ///   - title: the row's label.
    ///   - count: the starting count.
    public init(id: Int, title: String, count: Int = 0) {
        self.id = id
        self.title = title
        self.count = count
    }

    /// `{"id": 7, "title": "Row 7", "count": 0}`.
    public var jsonValue: JSONValue { ["id": .int(id), "title": .string(title), "count": .int(count)] }
}
