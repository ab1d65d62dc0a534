import MVVMR

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

/// The randomness of a page's own seeded generator (`context.random`): the same draws on every replay of its
/// session's log.
public struct SeededRandomSource: RandomSource {
    private let generator: SessionRandom

    /// Draws from `generator`.
    /// - Parameter generator: the page's `context.random`.
    public init(_ generator: SessionRandom) {
        self.generator = generator
    }

    /// An index in `0..<upperBound` from the page's generator.
    public func index(below upperBound: Int) -> Int {
        generator.index(below: upperBound)
    }
}
