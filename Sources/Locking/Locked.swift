#if MVVMR_PTHREAD_LOCK
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif
#else
    import Synchronization
#endif

/// The project's one lock: a value that is only ever read or changed while a lock is held. (Where a thread
/// must sleep until the value changes, ``Monitor`` adds a condition variable to a pthread mutex.)
///
/// Normal builds use `Synchronization.Mutex`. ThreadSanitizer cannot see that lock and reports
/// false races through it, so builds with `-D MVVMR_PTHREAD_LOCK` (the project's TSan run) use a
/// pthread mutex instead. Both behave the same: not re-entrant, no ordering guarantees.
///
/// ```swift
/// let counter = Locked(0)
/// counter.withLock { $0 += 1 }
/// ```
public final class Locked<State>: @unchecked Sendable {
    // @unchecked Sendable: `state` is only touched inside `withLock`, which holds the lock,
    // and `sending` keeps non-Sendable state from escaping its region.
    // Visible to inlined code: `withLock` is specialized in its callers, so a lock call costs the lock
    // itself and not a run-time lookup of `Mutex<State>`'s generic metadata.
    #if MVVMR_PTHREAD_LOCK
        @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
        @usableFromInline var state: State
    #else
        @usableFromInline let mutex: Mutex<State>
    #endif

    /// Creates a lock guarding `initialState`.
    /// - Parameter initialState: the value the lock guards from now on.
    public init(_ initialState: sending State) {
        #if MVVMR_PTHREAD_LOCK
            mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
            state = initialState
        #else
            mutex = Mutex(initialState)
        #endif
    }

    #if MVVMR_PTHREAD_LOCK
        deinit {
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
        }
    #endif

    /// Runs `body` with exclusive access to the guarded value and returns its result.
    ///
    /// The lock is not re-entrant: calling `withLock` on the same instance from inside `body`
    /// deadlocks.
    /// - Parameter body: reads or changes the guarded value.
    /// - Returns: what `body` returned.
    @inlinable
    public func withLock<Result, Failure: Error>(
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        #if MVVMR_PTHREAD_LOCK
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&state)
        #else
            return try mutex.withLock(body)
        #endif
    }
}

/// ``Locked``, held inline in its owner rather than as an object of its own: one allocation (32 bytes) less wherever
/// a lock lives as long as the object that holds it (a session's core lives in its page session). Normal builds hold
/// a `Synchronization.Mutex` in place; the ThreadSanitizer build (`MVVMR_PTHREAD_LOCK`) holds a pthread ``Locked``,
/// which the sanitizer sees.
public struct InlineLocked<State>: ~Copyable {
    #if MVVMR_PTHREAD_LOCK
        @usableFromInline let lock: Locked<State>
    #else
        @usableFromInline let mutex: Mutex<State>
    #endif

    /// Creates a lock guarding `initialState`.
    /// - Parameter initialState: the value the lock guards from now on.
    @inlinable
    public init(_ initialState: sending State) {
        #if MVVMR_PTHREAD_LOCK
            lock = Locked(initialState)
        #else
            mutex = Mutex(initialState)
        #endif
    }

    /// Runs `body` with exclusive access to the guarded value and returns its result (not re-entrant, as
    /// ``Locked/withLock(_:)``).
    /// - Parameter body: reads or changes the guarded value.
    /// - Returns: what `body` returned.
    @inlinable
    public borrowing func withLock<Result, Failure: Error>(
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        #if MVVMR_PTHREAD_LOCK
            return try lock.withLock(body)
        #else
            return try mutex.withLock(body)
        #endif
    }
}

// Sendable as `Locked` and `Mutex` are: the state is only touched inside `withLock`.
extension InlineLocked: @unchecked Sendable {}
