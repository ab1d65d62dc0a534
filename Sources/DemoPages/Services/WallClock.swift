#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The time of day for the dashboard's clock; inject a fixed one in tests.
public protocol WallClock: Sendable {
    /// Whole seconds since 1970-01-01 00:00:00 UTC.
    func secondsSince1970() -> Int
}

/// The system's clock (`time(2)`).
public struct SystemWallClock: WallClock {
    /// The system's clock.
    public init() {}

    /// Whole seconds since 1970-01-01 00:00:00 UTC, now.
    public func secondsSince1970() -> Int { Int(time(nil)) }
}

/// A clock stopped at one instant: for tests, and for pages that must not depend on the date.
public struct FixedWallClock: WallClock {
    /// The instant it shows.
    public let seconds: Int

    /// A clock stopped at `seconds` since 1970.
    /// - Parameter seconds: whole seconds since 1970-01-01 00:00:00 UTC.
    public init(seconds: Int) {
        self.seconds = seconds
    }

    /// Always `seconds`.
    public func secondsSince1970() -> Int { seconds }
}
