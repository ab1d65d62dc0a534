import JSONPatch
import Locking

/// The pages and the navigation stack of one client's session, behind one lock: what the server
/// drives.
///
/// Every request runs synchronously on the calling thread inside the session's lock: the action
/// reaches the page's Input, the ViewModel's streams run, the Output writes become one patch per
/// changed page, and the result is returned. Work that finishes later (async Model calls, timers)
/// re-enters through the same lock from a `Task`. Every change, whoever caused it, is numbered and
/// handed to the event sink in order, from inside the lock; results carry the events they caused.
///
/// ```swift
/// let session = PageSession(registry: registry, services: services) { event in log.append(event) }
/// let start = try session.start()                                  // binds the root page
/// let result = try session.perform("showGreeting", on: "greeting", clientRevision: 0)
/// // result.rev == 1, result.patch == [replace /greeting "Hello David Blaine"]
/// ```
///
/// The event sink runs inside the lock: it must not call back into the session.
public final class PageSession: Sendable {
    private let core: Locked<SessionCore>

    /// A session with no page yet.
    /// - Parameters:
    ///   - registry: the app's units and root.
    ///   - services: the Model layer handed to ViewModels.
    ///   - clock: real time (production) or virtual time (tests).
    ///   - historyLimit: how many patches each page keeps for catching up clients that are behind.
    ///   - historyByteLimit: how many bytes of patches (``EstimatedJSONSize``) each page keeps at most;
    ///     unlimited by default (then only `historyLimit` bounds them).
    ///   - eventSink: receives every event, in order, from inside the session's lock.
    public init(
        registry: UnitRegistry, services: Services = Services(), clock: SessionClock = .realTime,
        historyLimit: Int = 64, historyByteLimit: Int = .max, eventSink: (@Sendable (SessionEvent) -> Void)? = nil
    ) {
        let scheduler = Scheduler(mode: clock == .virtual ? .virtual : .realTime(start: .now))
        let core = SessionCore(
            registry: registry, services: services, scheduler: scheduler, historyLimit: historyLimit,
            historyByteLimit: historyByteLimit)
        core.eventSink = eventSink
        self.core = Locked(core)
        self.core.withLock { core in
            // Tasks capture only this Sendable handle (weakly) and plain ids and values.
            core.scheduler.reenter = { [weak self] reentry in self?.reenter(reentry) }
        }
    }

    deinit {
        // Pages hold their stream graphs in cycles until released; a session dropped without
        // `releaseAll()` must not leak them.
        core.withLock { $0.releaseAll() }
    }

    /// Installs (or removes) the event sink; it receives the events that happen from now on.
    /// - Parameter sink: called in order, from inside the session's lock, for every event.
    public func setEventSink(_ sink: (@Sendable (SessionEvent) -> Void)?) {
        core.withLock { $0.eventSink = sink }
    }

    /// Releases every page and binds a fresh page of `unit` (the registry's root when nil) as the only
    /// entry of the stack: a `root` navigation.
    /// - Parameters:
    ///   - unit: the first page; the registry's root when nil.
    ///   - parameters: its route parameters.
    ///   - value: a value for its ViewModel (`context.sentValue(as:)`), as JSON, as a router sends it
    ///     (`JSONValue(encoding:)` makes one from a `Codable` value); nil for none.
    /// - Throws: `binding_failed` or `missing_service` when its ViewModel cannot be made.
    @discardableResult
    public func start(
        at unit: UnitCase? = nil, parameters: [String: String] = [:], sending value: JSONValue? = nil
    ) throws(PageError) -> NavigationResult {
        try core.withLock { core throws(PageError) in
            try core.start(at: unit ?? core.registry.root, parameters: parameters, sentValue: value)
        }
    }

    /// The page of `unit`, binding a fresh one first (outside the navigation stack, with a `snapshot`
    /// event) when it has no live page.
    /// - Parameters:
    ///   - unit: the unit's name.
    ///   - parameters: route parameters for a page bound now.
    /// - Throws: `unknown_unit`, or a binding error.
    public func snapshot(of unit: String, parameters: [String: String] = [:]) throws(PageError) -> PageSnapshot {
        try core.withLock { core throws(PageError) in try core.snapshot(of: unit, parameters: parameters) }
    }

    /// The page of `unit` as ``snapshot(of:parameters:)`` gives it, with the session's latest event number
    /// and navigation stack read under the same lock: the page shows every event up to `sequence`.
    /// - Parameters:
    ///   - unit: the unit's name.
    ///   - parameters: route parameters for a page bound now.
    /// - Throws: `unknown_unit`, or a binding error.
    public func read(_ unit: String, parameters: [String: String] = [:]) throws(PageError) -> PageRead {
        try core.withLock { core throws(PageError) in
            let snapshot = try core.snapshot(of: unit, parameters: parameters)
            return PageRead(
                snapshot: snapshot, sequence: core.sequence, navigation: core.navigationState,
                encodedView: core.encodedView(of: unit))
        }
    }

    /// Delivers one action to a live page and returns what it changed.
    /// - Parameters:
    ///   - action: the action's name (`part.action` for a part's).
    ///   - value: the action's value; `null` for actions without one.
    ///   - unit: the unit's name.
    ///   - clientRevision: the revision the client holds; the patch returned starts there.
    /// - Throws: `unknown_unit`, `page_not_bound`, `unknown_action` (with `allowed`), `invalid_value`,
    ///   or `invalid_request` for a revision that is negative or ahead; then nothing changed.
    @discardableResult
    public func perform(
        _ action: String, value: JSONValue = .null, on unit: String, clientRevision: Int? = nil
    ) throws(PageError) -> ActionResult {
        try core.withLock { core throws(PageError) in
            try core.perform(action, value: value, on: unit, clientRevision: clientRevision)
        }
    }

    /// Performs a client-initiated navigation: `back`, or `open(unit)`.
    /// - Parameter request: the navigation.
    /// - Throws: `unknown_unit`, or a binding error for a unit pushed by `open`.
    @discardableResult
    public func navigate(_ request: ClientNavigation) throws(PageError) -> NavigationResult {
        try core.withLock { core throws(PageError) in try core.navigate(request) }
    }

    /// The navigation stack.
    public var navigation: NavigationState {
        core.withLock { $0.navigationState }
    }

    /// Every live page, sorted by unit name.
    public var pages: [PageSnapshot] {
        core.withLock { $0.snapshots }
    }

    /// How many pages are live (cheaper than ``pages``: builds no snapshot); the server's metrics read it.
    public var livePageCount: Int {
        core.withLock { $0.pages.values.count }
    }

    /// The bytes the live pages hold: each view as compact JSON text, and the patches each keeps for
    /// catching up clients (counted when `historyByteLimit` is set). A view's text is cached until its next
    /// change (a page read after this reuses it), so measuring an unchanged session costs no encoding; a
    /// server bounding what a session holds reads it now and then, not on every request.
    public var pageByteCount: Int {
        core.withLock { core in
            core.pages.values.reduce(0) { $0 + $1.document.encodedView.count + $1.document.historyBytes }
        }
    }

    /// The sequence number of the session's latest event (0 before the first).
    public var sequence: Int {
        core.withLock { $0.sequence }
    }

    /// Releases every page and cancels every timer and async job: the session ends.
    public func releaseAll() {
        core.withLock { $0.releaseAll() }
    }

    /// Moves a virtual clock forward, firing due timers, each in its own turn. Does nothing in real time.
    /// - Parameter duration: how far to move.
    public func advanceTime(by duration: Duration) {
        core.withLock { $0.scheduler.advance(by: duration) }
    }

    /// Runs the async work waiting on a virtual clock, one job at a time, each result re-entering the
    /// session like a real one would; also the work those results start. Does nothing in real time.
    public func runPendingWork() async {
        while let work = core.withLock({ $0.scheduler.takeNextPendingWork() }) {
            let result = await work.run()
            reenter(.work(work.id, result))
        }
    }

    /// How many async jobs are running or waiting.
    public var pendingWorkCount: Int {
        core.withLock { $0.scheduler.pendingWorkCount }
    }

    private func reenter(_ reentry: Scheduler.Reentry) {
        core.withLock { $0.reenter(reentry) }
    }
}
