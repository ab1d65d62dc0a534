/// Randomness for the dashboard's quote shuffle; inject a scripted one in tests.
public protocol RandomSource: Sendable {
    /// A number in `0..<upperBound`; `upperBound` is at least 1.
    /// - Parameter upperBound: one past the largest allowed number.
    func index(below upperBound: Int) -> Int
}

/// The system's random number generator.
public struct SystemRandomSource: RandomSource {
    /// The system's generator.
    public init() {}

    /// A uniformly random number in `0..<upperBound` (0 when `upperBound` is not positive).
    /// - Parameter upperBound: one past the largest allowed number.
    public func index(below upperBound: Int) -> Int {
        upperBound > 0 ? Int.random(in: 0..<upperBound) : 0
    }
}
