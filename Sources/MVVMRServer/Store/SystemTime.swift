#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The wall clock, for what outlives the process (a stored session's last activity).
enum SystemTime {
    /// Whole seconds since 1970 (UTC).
    static func secondsSince1970() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec)
    }

    /// The time since 1970 (UTC), to the nanosecond.
    static func sinceEpoch() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return .seconds(Int64(now.tv_sec)) + .nanoseconds(Int64(now.tv_nsec))
    }
}

/// The monotonic clock in microseconds: what a request's duration and the session writer's pacing are measured with
/// (a `ContinuousClock` reading and a `Duration` difference cost 128-bit arithmetic on every request).
enum MonotonicClock {
    /// Microseconds since some fixed point (the system's boot).
    static func microseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int(now.tv_sec) &* 1_000_000 &+ Int(now.tv_nsec) / 1_000
    }
}
