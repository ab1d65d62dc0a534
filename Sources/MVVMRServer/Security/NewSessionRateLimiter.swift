import Locking

/// Limits how many sessions one address may open per minute (a fixed one-minute window per address).
public final class NewSessionRateLimiter: Sendable {
    private struct Window {
        var start: ContinuousClock.Instant
        var count: Int
    }

    /// Sessions allowed per address per minute; 0 means unlimited.
    public let limitPerMinute: Int
    private let windows = Locked<[String: Window]>([:])
    private let clock = ContinuousClock()

    /// Creates a limiter.
    /// - Parameter limitPerMinute: sessions per address per minute; 0 for no limit.
    public init(limitPerMinute: Int) {
        self.limitPerMinute = limitPerMinute
    }

    /// Counts one new session for `address`.
    /// - Parameter address: the client's address.
    /// - Returns: `nil` when allowed, else the seconds until the address may try again.
    public func admit(_ address: String) -> Int? {
        guard limitPerMinute > 0 else { return nil }
        let now = clock.now
        return windows.withLock { windows in
            if windows.count > 10_000 {
                // Forget finished windows now and then, so that many addresses cannot grow this without bound.
                windows = windows.filter { now - $0.value.start < .seconds(60) }
            }
            var window = windows[address] ?? Window(start: now, count: 0)
            if now - window.start >= .seconds(60) { window = Window(start: now, count: 0) }
            guard window.count < limitPerMinute else {
                let remaining = .seconds(60) - (now - window.start)
                return max(1, Int(remaining.components.seconds) + 1)
            }
            window.count += 1
            windows[address] = window
            return nil
        }
    }
}
