import Synchronization

/// The random numbers of one page, from a seed its session keeps in its log: the same seed gives the same
/// numbers, so a page restored by replaying the log draws exactly what it drew live. Reach it through
/// `context.random`; never call `Int.random(in:)` with the system generator in a ViewModel (a replay would
/// draw other numbers, and the page would be bound fresh as diverged).
///
/// ```swift
/// let pick = Int.random(in: 0..<quotes.count, using: &generator)   // var generator = context.random
/// ```
public final class SessionRandom: RandomNumberGenerator, Sendable {
    /// SplitMix64's state, in the object itself (every bound page has a generator, so no second allocation for a
    /// lock): each draw advances it by the same constant, atomically.
    private let state: Atomic<UInt64>

    private static let increment: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// A generator starting at `seed`.
    /// - Parameter seed: any value; equal seeds give equal sequences.
    public init(seed: UInt64) {
        state = Atomic(seed)
    }

    /// Where the generator stands: a generator made with this as its seed goes on with the same numbers.
    var position: UInt64 {
        state.load(ordering: .relaxed)
    }

    /// The next 64 random bits (SplitMix64).
    public func next() -> UInt64 {
        // Draws racing on two threads each take their own step of the sequence, as they did under a lock.
        var mixed = state.wrappingAdd(Self.increment, ordering: .relaxed).newValue
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A random index in `0..<upperBound` (0 when `upperBound` is not positive).
    /// - Parameter upperBound: how many choices there are.
    public func index(below upperBound: Int) -> Int {
        guard upperBound > 0 else { return 0 }
        var generator = self
        return Int.random(in: 0..<upperBound, using: &generator)
    }
}
