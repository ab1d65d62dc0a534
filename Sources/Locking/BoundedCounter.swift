import Synchronization

extension Atomic where Value == Int {
    /// Adds one unless the value is already at `limit` or over it (compare-and-exchange, so that threads counting at
    /// the same moment never take it past the limit together).
    /// - Parameter limit: the most the value may reach.
    /// - Returns: whether one was added.
    public func incrementIfBelow(_ limit: Int) -> Bool {
        var current = load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = compareExchange(expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }
}
