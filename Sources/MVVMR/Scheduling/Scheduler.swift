import JSONPatch

/// The clock and the async runner of one session: timers, debounce, throttle and async Model calls
/// go through it, so their results re-enter the session's serial context.
///
/// A session made for production uses real time: timers sleep in a `Task`, async work runs in a
/// `Task`, and both come back through the session's lock. A virtual scheduler (tests, and the
/// `PageTester`) does nothing by itself: time moves only with `advance(by:)` and async work runs only
/// when the test asks, so timed and async behaviour is deterministic.
///
/// Idle pages cost nothing here: no task or timer exists unless a stream asked for one.
public final class Scheduler {
    /// How this scheduler moves time and runs async work.
    enum Mode {
        /// Time moves only when told; `now` is how far it has moved.
        case virtual(now: Duration)
        case realTime(start: ContinuousClock.Instant)

        /// A virtual clock at zero.
        static let virtual = Mode.virtual(now: .zero)
    }

    /// Work that came back from a `Task` (real time), from the tester (virtual time) or from a session's
    /// log (replay): a timer's ordinal, or a job's ordinal and its result as JSON.
    enum Reentry: Sendable, Equatable {
        case timer(Int)
        case work(Int, JSONValue)
    }

    /// An async job waiting to run, as handed to whoever runs it: its result comes back as JSON.
    struct PendingWork: Sendable {
        let id: Int
        let run: @Sendable () async -> JSONValue
    }

    private struct Timer {
        let deadline: Duration
        let order: Int
        let action: () -> Void
        /// The sleeping task of a real-time timer, cancelled with the timer.
        var task: Task<Void, Never>?
    }

    private struct Job {
        /// Decodes the result and hands it to the stream that asked for it.
        let deliver: (JSONValue) -> Void
        let run: @Sendable () async -> JSONValue
        var task: Task<Void, Never>?
        var pending: PendingWork?
    }

    private(set) var mode: Mode
    /// The virtual time reached (zero in real time): kept in ``mode``, so a real-time scheduler has no room for it.
    private var virtualNow: Duration {
        get {
            if case .virtual(let now) = mode { return now }
            return .zero
        }
        set {
            if case .virtual = mode { mode = .virtual(now: newValue) }
        }
    }
    /// The timers and jobs waiting, made with the first of either: most sessions' pages start none, and an idle
    /// session keeps one reference here rather than two dictionaries.
    private final class Waiting {
        var timers: [Int: Timer] = [:]
        var jobs: [Int: Job] = [:]
    }

    private var waitingStorage: Waiting?
    /// The timers and jobs waiting, made when first needed (to add to them).
    private var waiting: Waiting {
        if let waitingStorage { return waitingStorage }
        let made = Waiting()
        waitingStorage = made
        return made
    }
    /// The timers waiting to fire, by ordinal.
    private var timers: [Int: Timer] { waitingStorage?.timers ?? [:] }
    /// The jobs running or waiting to run, by ordinal.
    private var jobs: [Int: Job] { waitingStorage?.jobs ?? [:] }

    /// The ordinal of the next timer or job (a session snapshot keeps it, so a restored session numbers on).
    var nextID = 0
    /// ``wallClockOrigin`` in nanoseconds, as a session's log keeps it (8 bytes rather than a `Duration`'s 16).
    private var wallClockOriginNanoseconds: Int64 = 0
    /// The wall clock's reading (time since 1970, UTC) at this scheduler's zero, to the nanosecond: see
    /// ``wallClock``.
    public internal(set) var wallClockOrigin: Duration {
        get { .nanoseconds(wallClockOriginNanoseconds) }
        set { wallClockOriginNanoseconds = Int64(InputRecord.nanoseconds(newValue)) }
    }

    /// The session core that runs timer actions and job deliveries, each in one turn (one patch per page)
    /// recorded as an input of its log; nil (a scheduler outside a session): they run as they are.
    ///
    /// Unowned and cleared by the core's `deinit` rather than weak: a weak reference gives its object a side table
    /// (32 bytes in every live session). Safe because only the core's own context (its lock) reads it, the core
    /// owns this scheduler, and the core's `deinit` clears it before the core's memory goes.
    unowned(unsafe) var turnRunner: SessionCore?
    /// The session that real-time work comes back into (the tasks hold it weakly); set by the session that owns
    /// this scheduler and cleared by its `deinit` (unowned for the reason ``turnRunner`` is: read only inside the
    /// session's lock, which only that session reaches).
    unowned(unsafe) var reentryTarget: PageSession?

    init(mode: Mode) {
        self.mode = mode
    }

    /// A scheduler whose time moves only with `advance(by:)` and whose async work runs only in
    /// `runPendingWork()`: for tests of streams outside a session.
    public static func virtual() -> Scheduler { Scheduler(mode: .virtual) }

    /// The time elapsed since the scheduler was made (virtual time for a virtual scheduler).
    public var now: Duration {
        switch mode {
        case .virtual(let now): return now
        case .realTime(let start): return ContinuousClock.now - start
        }
    }

    /// The wall-clock time (since 1970, UTC) as the session sees it: the reading at the session's start, kept in
    /// its log, plus the session clock's time since. A ViewModel reads the time of day here, never from the
    /// system, so that a replay sees the times the live session saw (virtual sessions start at 1970).
    public var wallClock: Duration { wallClockOrigin + now }

    /// ``wallClock`` in whole seconds.
    public var secondsSince1970: Int { Int(wallClock.components.seconds) }

    /// Whether time moves only when a test says so.
    public var isVirtual: Bool {
        if case .virtual = mode { return true }
        return false
    }

    /// How many timers are waiting to fire.
    public var scheduledTimerCount: Int { timers.count }

    /// How many async jobs are running or waiting to run.
    public var pendingWorkCount: Int { jobs.count }

    /// Runs `action` inside the session's context once `delay` has passed, unless cancelled first.
    /// - Parameters:
    ///   - delay: how long to wait; negative counts as zero.
    ///   - action: what to run.
    /// - Returns: the subscription that cancels the timer.
    public func schedule(after delay: Duration, _ action: @escaping () -> Void) -> Subscription {
        let id = nextID
        nextID &+= 1
        let delay = max(delay, .zero)
        var timer = Timer(deadline: now + delay, order: id, action: action)
        if case .realTime = mode, let reentryTarget {
            timer.task = Self.arm(after: delay, id: id, reenter: reentryTarget)
        }
        waiting.timers[id] = timer
        return Subscription { [weak self] in
            self?.waitingStorage?.timers.removeValue(forKey: id)?.task?.cancel()
        }
    }

    /// Starts `work` off the session's context and calls `deliver` with its result inside the context,
    /// unless cancelled first (then `deliver` never runs).
    ///
    /// The result crosses back as JSON (encoded in the task, off the session's context) and is decoded
    /// for `deliver`, live and in replay alike: what a page sees is exactly what the session's log holds, so
    /// replaying the log gives the same page. A result that does not encode (a non-finite number) is
    /// recorded as `null` and never delivered.
    func launch<Result: Codable & Sendable>(
        _ work: @escaping @Sendable () async -> Result, deliver: @escaping (Result) -> Void
    ) -> Subscription {
        let id = nextID
        nextID &+= 1
        let run: @Sendable () async -> JSONValue = {
            let result = await work()
            return (try? JSONValueEncoder().encode(result)) ?? .null
        }
        var job = Job(
            deliver: { json in
                if let result = try? JSONValueDecoder().decode(Result.self, from: json) { deliver(result) }
            }, run: run)
        switch mode {
        case .virtual:
            job.pending = PendingWork(id: id, run: run)
        case .realTime:
            if let reentryTarget {
                job.task = Self.start(run, id: id, reenter: reentryTarget)
            } else {
                // A real-time scheduler outside a session has nowhere to deliver to; keep it pending.
                job.pending = PendingWork(id: id, run: run)
            }
        }
        waiting.jobs[id] = job
        return Subscription { [weak self] in
            self?.waitingStorage?.jobs.removeValue(forKey: id)?.task?.cancel()
        }
    }

    private static func start(
        _ run: @escaping @Sendable () async -> JSONValue, id: Int, reenter session: PageSession
    ) -> Task<Void, Never> {
        Task { [weak session] in
            let result = await run()
            if !Task.isCancelled { session?.reenter(.work(id, result)) }
        }
    }

    private static func arm(
        after delay: Duration, id: Int, reenter session: PageSession
    ) -> Task<Void, Never> {
        Task { [weak session] in
            try? await Task.sleep(for: delay)
            if !Task.isCancelled { session?.reenter(.timer(id)) }
        }
    }

    /// Sets virtual time to `time` (replaying a log: each input at the time it was recorded). Time never
    /// goes back; does nothing on a real-time scheduler.
    func moveVirtualTime(to time: Duration) {
        guard case .virtual = mode else { return }
        virtualNow = max(virtualNow, time)
    }

    /// Switches a virtual scheduler (a session just replayed from its log) to real time, with the clock going
    /// on from the virtual time reached: timers still pending are armed for what is left of their delays,
    /// and jobs whose results were not in the log start now.
    /// - Parameter catchingUpTo: the session clock's time now (the wall clock less ``wallClockOrigin``), when
    ///   further than the log reached: the time the session was away counts, and timers due meanwhile fire now.
    func goLive(catchingUpTo: Duration? = nil) {
        guard case .virtual = mode, let reenter = reentryTarget else { return }
        let reached = max(virtualNow, catchingUpTo ?? .zero)
        mode = .realTime(start: ContinuousClock.now - reached)
        guard let waitingStorage else { return }
        for (id, timer) in waitingStorage.timers {
            waitingStorage.timers[id]?.task = Self.arm(after: max(timer.deadline - reached, .zero), id: id, reenter: reenter)
        }
        for (id, job) in waitingStorage.jobs {
            guard job.pending != nil else { continue }
            waitingStorage.jobs[id]?.pending = nil
            waitingStorage.jobs[id]?.task = Self.start(job.run, id: id, reenter: reenter)
        }
    }

    /// Moves virtual time forward by `duration`, firing due timers in deadline order, each in its own
    /// turn. Does nothing on a real-time scheduler.
    /// - Parameter duration: how far to move.
    public func advance(by duration: Duration) {
        guard case .virtual = mode else { return }
        let target = virtualNow + max(duration, .zero)
        while let (id, timer) = nextTimer(dueBy: target) {
            waitingStorage?.timers[id] = nil
            virtualNow = max(virtualNow, timer.deadline)
            runTurn(.timer(id), timer.action)
        }
        virtualNow = target
    }

    /// Runs every async job waiting on a virtual scheduler, one at a time in the order they started,
    /// delivering each result before running the next; jobs started meanwhile run too.
    public func runPendingWork() async {
        while let work = takeNextPendingWork() {
            let result = await work.run()
            deliver(.work(work.id, result))
        }
    }

    /// Removes and returns the oldest job that waits to be run by a test.
    func takeNextPendingWork() -> PendingWork? {
        guard let waitingStorage, let id = waitingStorage.jobs.filter({ $0.value.pending != nil }).keys.min(),
            let pending = waitingStorage.jobs[id]?.pending
        else { return nil }
        waitingStorage.jobs[id]?.pending = nil
        return pending
    }

    /// Runs a timer or delivers a job result that came back; stale ones (cancelled meanwhile) are
    /// dropped.
    /// - Returns: whether it ran (a stale one did not).
    @discardableResult
    func deliver(_ reentry: Reentry) -> Bool {
        switch reentry {
        case .timer(let id):
            guard let timer = waitingStorage?.timers.removeValue(forKey: id) else { return false }
            runTurn(reentry, timer.action)
        case .work(let id, let result):
            guard let job = waitingStorage?.jobs.removeValue(forKey: id) else { return false }
            runTurn(reentry) { job.deliver(result) }
        }
        return true
    }

    /// Runs a timer's action or a job's delivery in the session's turn (directly outside a session).
    private func runTurn(_ reentry: Reentry, _ body: () -> Void) {
        if let turnRunner {
            turnRunner.runTurn(reentry, body)
        } else {
            body()
        }
    }

    /// Cancels the timers and jobs made since `ordinal` was the next one, and makes it the next one again: a page
    /// bound again after hibernating started them, and it had none pending when it began to hibernate.
    func cancel(from ordinal: Int) {
        if let waitingStorage {
            for (id, timer) in waitingStorage.timers where id >= ordinal {
                timer.task?.cancel()
                waitingStorage.timers[id] = nil
            }
            for (id, job) in waitingStorage.jobs where id >= ordinal {
                job.task?.cancel()
                waitingStorage.jobs[id] = nil
            }
        }
        nextID = ordinal
    }

    /// Cancels every timer and job: the session is going away.
    func cancelAll() {
        for job in jobs.values { job.task?.cancel() }
        for timer in timers.values { timer.task?.cancel() }
        waitingStorage = nil
    }

    private func nextTimer(dueBy target: Duration) -> (Int, Timer)? {
        var best: (Int, Timer)?
        for (id, timer) in timers where timer.deadline <= target {
            if let current = best?.1,
                (current.deadline, current.order) <= (timer.deadline, timer.order)
            {
                continue
            }
            best = (id, timer)
        }
        return best
    }
}
