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
        case virtual
        case realTime(start: ContinuousClock.Instant)
    }

    /// Work that came back from a `Task` (real time) or from the tester (virtual time).
    enum Reentry: Sendable {
        case timer(Int)
        case work(Int, any Sendable)
    }

    /// An async job waiting to run, as handed to whoever runs it.
    struct PendingWork: Sendable {
        let id: Int
        let run: @Sendable () async -> any Sendable
    }

    private struct Timer {
        let deadline: Duration
        let order: Int
        let action: () -> Void
        /// The sleeping task of a real-time timer, cancelled with the timer.
        var task: Task<Void, Never>?
    }

    private struct Job {
        let deliver: (any Sendable) -> Void
        var task: Task<Void, Never>?
        var pending: PendingWork?
    }

    let mode: Mode
    private var virtualNow: Duration = .zero
    private var timers: [Int: Timer] = [:]
    private var jobs: [Int: Job] = [:]
    private var nextID = 0
    /// Runs timer actions and job deliveries; a session wraps each in one turn (one patch per page).
    var runTurn: (() -> Void) -> Void = { $0() }
    /// Brings real-time work back into the session; set by the session that owns this scheduler.
    var reenter: (@Sendable (Reentry) -> Void)?

    init(mode: Mode) {
        self.mode = mode
    }

    /// A scheduler whose time moves only with `advance(by:)` and whose async work runs only in
    /// `runPendingWork()`: for tests of streams outside a session.
    public static func virtual() -> Scheduler { Scheduler(mode: .virtual) }

    /// The time elapsed since the scheduler was made (virtual time for a virtual scheduler).
    public var now: Duration {
        switch mode {
        case .virtual: return virtualNow
        case .realTime(let start): return ContinuousClock.now - start
        }
    }

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
        if case .realTime = mode, let reenter {
            timer.task = Task {
                try? await Task.sleep(for: delay)
                if !Task.isCancelled { reenter(.timer(id)) }
            }
        }
        timers[id] = timer
        return Subscription { [weak self] in
            self?.timers.removeValue(forKey: id)?.task?.cancel()
        }
    }

    /// Starts `work` off the session's context and calls `deliver` with its result inside the context,
    /// unless cancelled first (then `deliver` never runs).
    func launch<Result: Sendable>(
        _ work: @escaping @Sendable () async -> Result, deliver: @escaping (Result) -> Void
    ) -> Subscription {
        let id = nextID
        nextID &+= 1
        let erased: @Sendable () async -> any Sendable = { await work() }
        var job = Job(deliver: { value in
            if let result = value as? Result { deliver(result) }
        })
        switch mode {
        case .virtual:
            job.pending = PendingWork(id: id, run: erased)
        case .realTime:
            if let reenter {
                job.task = Task {
                    let result = await erased()
                    reenter(.work(id, result))
                }
            } else {
                // A real-time scheduler outside a session has nowhere to deliver to; keep it pending.
                job.pending = PendingWork(id: id, run: erased)
            }
        }
        jobs[id] = job
        return Subscription { [weak self] in
            self?.jobs.removeValue(forKey: id)?.task?.cancel()
        }
    }

    /// Moves virtual time forward by `duration`, firing due timers in deadline order, each in its own
    /// turn. Does nothing on a real-time scheduler.
    /// - Parameter duration: how far to move.
    public func advance(by duration: Duration) {
        guard case .virtual = mode else { return }
        let target = virtualNow + max(duration, .zero)
        while let (id, timer) = nextTimer(dueBy: target) {
            timers[id] = nil
            virtualNow = max(virtualNow, timer.deadline)
            runTurn(timer.action)
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
        guard let id = jobs.filter({ $0.value.pending != nil }).keys.min(),
            let pending = jobs[id]?.pending
        else { return nil }
        jobs[id]?.pending = nil
        return pending
    }

    /// Runs a timer or delivers a job result that came back; stale ones (cancelled meanwhile) are
    /// dropped.
    func deliver(_ reentry: Reentry) {
        switch reentry {
        case .timer(let id):
            guard let timer = timers.removeValue(forKey: id) else { return }
            runTurn(timer.action)
        case .work(let id, let result):
            guard let job = jobs.removeValue(forKey: id) else { return }
            runTurn { job.deliver(result) }
        }
    }

    /// Cancels every timer and job: the session is going away.
    func cancelAll() {
        for job in jobs.values { job.task?.cancel() }
        for timer in timers.values { timer.task?.cancel() }
        jobs = [:]
        timers = [:]
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
