#if MVVMR_PTHREAD_LOCK
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif
#else
    import Synchronization
#endif

/// One request's state across the library's calls into the access handler, kept in its `con_cls`.
///
/// The plain fields are only touched from the library thread serving the connection (the library calls
/// back for one connection on one thread at a time); the answer's phase is also written by the `Task` of an
/// asynchronous handler, or the thread that answers a deferred one, so it lives behind a lock (``withPhase(_:)``).
final class RequestContext: @unchecked Sendable {
    // @unchecked Sendable: see above; only the phase is shared across threads, and it is locked.

    enum Phase {
        /// A deferred handler runs on the library's thread; the connection is not suspended yet.
        case handling
        /// The connection is suspended while a `Task` runs (or a deferred handler's answer is awaited).
        case waiting
        /// The `Task` finished (or shutdown answered for it); the connection was resumed to send this. `kept` is what
        /// the answering thread asked to have released once it is sent, on the library's thread (see
        /// ``DeferredResponder/respond(_:keepingUntilSent:)``).
        case ready(HTTPResponse, kept: (any AnyObject & Sendable)?)
        /// The response was queued.
        case answered
    }

    /// The library's connection (nil under MicroHTTP's own engine).
    let connection: ConnectionHandle?
    /// MicroHTTP's own engine, serving the request (nil under libmicrohttpd): an answer given later is handed to it,
    /// and whichever of its loops comes first sends it.
    let engine: EpollEngine?
    var body: [UInt8] = []
    /// A response was queued for this request.
    var responded = false
    /// The request was handed to an asynchronous or deferred handler.
    var isAsynchronous = false
    /// The request sits in the server's waiting list (its answer comes later), from which it is removed when done.
    var isListedAsWaiting = false
    var rejection: HTTPError?
    /// The request's header fields, cookies and query as packed on the first call (to check its framing),
    /// decoded when it is dispatched, so the library's list is walked once per request.
    var packedValues: PackedValues?
    var discardedBytes = 0
    /// The engine's connection, for an asynchronous or deferred request: set by the loop that read the request before
    /// any other thread can see the context, and not changed after (the loop that sends the answer finds it so).
    var epollConnection: EpollConnection?
    /// The phase of an asynchronous or deferred request's answer, behind its own lock, in the context itself (no
    /// object of its own to make and free per request); nil to ``withPhase(_:)`` until ``beginWaiting(_:)``.
    private let phaseLock: PhaseLock

    /// Marks the request as waiting for an asynchronous handler (`.waiting`), or as being handled by a
    /// deferred one (`.handling`).
    func beginWaiting(_ initial: Phase = .waiting) {
        phaseLock.withLock { $0 = initial }
        isAsynchronous = true
    }

    /// Runs `body` on the answer's phase, inside its lock; nil (and `body` not run) for a request not handed to an
    /// asynchronous or deferred handler. `isAsynchronous` is set before the handler runs, and read by the thread
    /// that answers only after the handler handed it the request, so it needs no lock of its own.
    func withPhase<Result>(_ body: (inout sending Phase) -> sending Result) -> sending Result? {
        guard isAsynchronous else { return nil }
        return phaseLock.withLock(body)
    }

    init(connection: ConnectionHandle) {
        self.connection = connection
        engine = nil
        phaseLock = PhaseLock(.handling)
    }

    /// A request read by a loop of MicroHTTP's own engine.
    init(engine: EpollEngine) {
        connection = nil
        self.engine = engine
        phaseLock = PhaseLock(.handling)
    }
}

/// The lock of one request's ``RequestContext/Phase``, stored in the context itself: `Locking.Locked` made for this
/// one type, because a generic lock looks up `Mutex<Phase>`'s generic metadata at each use (about 1,400 instructions a
/// request); this one, not generic, looks up nothing. Like `Locked`, the ThreadSanitizer build (`MVVMR_PTHREAD_LOCK`)
/// uses a pthread mutex, which the sanitizer sees, in storage of its own (a pthread mutex must not move).
struct PhaseLock: ~Copyable {
    #if MVVMR_PTHREAD_LOCK
        private let storage: PthreadPhaseStorage
    #else
        private let mutex: Mutex<RequestContext.Phase>
    #endif

    init(_ initial: RequestContext.Phase) {
        #if MVVMR_PTHREAD_LOCK
            storage = PthreadPhaseStorage(initial)
        #else
            mutex = Mutex(initial)
        #endif
    }

    /// Runs `body` on the phase, holding the lock.
    borrowing func withLock<Result>(_ body: (inout sending RequestContext.Phase) -> sending Result) -> sending Result {
        #if MVVMR_PTHREAD_LOCK
            storage.withLock(body)
        #else
            mutex.withLock(body)
        #endif
    }
}

#if MVVMR_PTHREAD_LOCK
    /// The ThreadSanitizer build's phase and its pthread mutex, which must stay where it was initialised.
    final class PthreadPhaseStorage: @unchecked Sendable {
        // @unchecked Sendable: `phase` is only touched inside `withLock`, which holds the lock.
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>
        private var phase: RequestContext.Phase

        init(_ initial: RequestContext.Phase) {
            mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
            phase = initial
        }

        deinit {
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
        }

        func withLock<Result>(_ body: (inout sending RequestContext.Phase) -> sending Result) -> sending Result {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return body(&phase)
        }
    }
#endif

/// A libmicrohttpd connection pointer that may cross threads.
struct ConnectionHandle: @unchecked Sendable {
    // @unchecked Sendable: the library allows suspend/resume from any thread; every other use happens on
    // the library thread that calls back for this connection, and the server never stops the library while
    // a connection it suspended is not resumed.
    let pointer: OpaquePointer
}

/// A libmicrohttpd daemon pointer kept in the server's locked lifecycle state.
struct DaemonHandle: @unchecked Sendable {
    // @unchecked Sendable: what the server does with it (stop listening, stop) is thread-safe, and it does
    // each at most once.
    let pointer: OpaquePointer
}
