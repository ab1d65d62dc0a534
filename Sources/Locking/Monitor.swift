#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value behind a lock that a thread can wait on until it changes: a pthread mutex with a condition
/// variable, for the few places where a thread of the project's own sleeps until there is work (a writer
/// thread waiting for its queue, a caller waiting for that thread's answer).
///
/// Always a pthread mutex, in every build (`Mutex` has no condition variable), so ThreadSanitizer sees it.
/// Use ``Locked`` where nobody waits.
///
/// ```swift
/// let queue = Monitor([Int]())
/// // producer
/// let wasEmpty = queue.withLock { queue in queue.append(1); return queue.count == 1 }
/// if wasEmpty { queue.signal() }
/// // consumer
/// let items = queue.withLock(when: { !$0.isEmpty }) { queue in defer { queue = [] }; return queue }
/// ```
public final class Monitor<State>: @unchecked Sendable {
    // @unchecked Sendable: `state` is only touched while `mutex` is held (in `withLock` and in
    // `withLock(when:)`, where `pthread_cond_wait` gives the mutex back before it returns), and `sending`
    // keeps non-Sendable state from escaping its region.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var state: State

    /// Creates a monitor guarding `initialState`.
    /// - Parameter initialState: the value the monitor guards from now on.
    public init(_ initialState: sending State) {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
        state = initialState
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the guarded value and returns its result. Not re-entrant.
    /// - Parameter body: reads or changes the guarded value.
    /// - Returns: what `body` returned.
    public func withLock<Result, Failure: Error>(
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Waits until `isReady` holds for the guarded value, then runs `body` with exclusive access to it, in
    /// the same hold of the lock. The lock is given up while waiting; `isReady` is asked again after every
    /// wake-up (``signal()``, ``broadcast()``, or a spurious one).
    /// - Parameters:
    ///   - isReady: whether the value is as the caller waits for it to be.
    ///   - body: reads or changes the value once it is.
    /// - Returns: what `body` returned.
    public func withLock<Result, Failure: Error>(
        when isReady: (inout sending State) -> Bool,
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !isReady(&state) {
            pthread_cond_wait(condition, mutex)
        }
        return try body(&state)
    }

    /// Wakes one thread waiting in ``withLock(when:_:)``. Cheap when nobody waits. Give every waiter the same
    /// reason to wait (or use ``broadcast()``): the one woken may not be the one whose condition changed.
    public func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every thread waiting in ``withLock(when:_:)``.
    public func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
