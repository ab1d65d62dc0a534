import JSONPatch
import Locking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The pages and the navigation stack of one client's session, behind one lock: what the server
/// drives.
///
/// Every request runs synchronously on the calling thread inside the session's lock: the action
/// reaches the page's Input, the ViewModel's streams run, the Output writes become one patch per
/// changed page, and the result is returned. Work that finishes later (async Model calls, timers)
/// re-enters through the same lock from a `Task`. Only that step runs under the lock: every change,
/// whoever caused it, is numbered there and queued, and handed to the event sink (and every input's
/// record to the recorder) in order once the lock is released, before the call returns unless
/// another caller is handing out at that moment (then that caller hands these out too, right after
/// its own). Results carry the events they caused.
///
/// ```swift
/// let session = PageSession(registry: registry, services: services) { event in log.append(event) }
/// let start = try session.start()                                  // binds the root page
/// let result = try session.perform("showGreeting", on: "greeting", clientRevision: 0)
/// // result.rev == 1, result.patch == [replace /greeting "Hello David Blaine"]
/// ```
///
/// The event sink and the recorder run outside the lock, one call at a time, in order.
public final class PageSession: Sendable {
    /// How many popped pages a session's forward list keeps bound unless told otherwise.
    public static let defaultForwardLimit = 8

    /// The session's state behind its lock, held in the session itself: a lock object of its own would be one more
    /// allocation (32 bytes) in every live session.
    private let core: InlineLocked<SessionCore>
    /// What the steps produced for the recorder and the event sink, handed out after the lock.
    private let outbox = SessionOutbox()

    /// A session with no page yet.
    /// - Parameters:
    ///   - registry: the app's units and root.
    ///   - services: the Model layer handed to ViewModels.
    ///   - clock: real time (production) or virtual time (tests).
    ///   - historyLimit: how many patches each page keeps for catching up clients that are behind.
    ///   - historyByteLimit: how many bytes of patches (``EstimatedJSONSize``) each page keeps at most;
    ///     unlimited by default (then only `historyLimit` bounds them).
    ///   - forwardLimit: how many pages popped by `back` the forward list keeps bound for `forward` (8 by
    ///     default); beyond it the oldest is released.
    ///   - eventSink: receives every event, in order, once the step that made it released the session's lock.
    public convenience init(
        registry: UnitRegistry, services: Services = Services(), clock: SessionClock = .realTime,
        historyLimit: Int = 64, historyByteLimit: Int = .max, forwardLimit: Int = PageSession.defaultForwardLimit,
        eventSink: (@Sendable (SessionEvent) -> Void)? = nil
    ) {
        self.init(
            settings: PageSessionSettings(
                registry: registry, services: services, historyLimit: historyLimit, historyByteLimit: historyByteLimit,
                forwardLimit: forwardLimit),
            clock: clock, eventSink: eventSink)
    }

    /// A session with no page yet, made from settings shared with other sessions (a server's).
    /// - Parameters:
    ///   - settings: the registry, services and history limits.
    ///   - clock: real time (production) or virtual time (tests).
    ///   - eventSink: receives every event, in order, once the step that made it released the session's lock.
    public init(
        settings: PageSessionSettings, clock: SessionClock = .realTime,
        eventSink: (@Sendable (SessionEvent) -> Void)? = nil
    ) {
        let scheduler = Scheduler(mode: clock == .virtual ? .virtual : .realTime(start: .now))
        let core = SessionCore(settings: settings, scheduler: scheduler, outbox: outbox)
        outbox.setEventSink(eventSink)
        core.sendsEvents = eventSink != nil
        if clock == .realTime {
            // A live session's pages draw from a fresh seed and read the real wall clock; both go into its log.
            var system = SystemRandomNumberGenerator()
            core.seed = system.next()
            scheduler.wallClockOrigin = SystemClockReading.now()
        }
        self.core = InlineLocked(core)
        self.core.withLock { core in
            // Tasks capture only this Sendable handle (weakly) and plain ids and values.
            core.scheduler.reentryTarget = self
        }
    }

    deinit {
        // Pages hold their stream graphs in cycles until released; a session dropped without
        // `releaseAll()` must not leak them. The scheduler holds this session unowned (see
        // ``Scheduler/reentryTarget``), and a ViewModel may still hold the scheduler.
        core.withLock { core in
            // Cleared first: a ViewModel released now that starts a timer or a job gets no session to come back to.
            core.scheduler.reentryTarget = nil
            core.releaseAll()
        }
    }

    /// Installs (or removes) the recorder: from now on it receives every input's record, numbered and timed,
    /// with the events the input caused, in input order, once the input's step released the session's lock
    /// (one call at a time). A server appends the records to its ``SessionInput`` log there.
    /// - Parameter recorder: called once per input.
    public func setRecorder(_ recorder: (@Sendable (InputRecord, [SessionEvent]) -> Void)?) {
        outbox.setRecorder(recorder)
        updateOutputSwitches()
    }

    /// Installs (or removes) the event sink; it receives the events that happen from now on.
    /// - Parameter sink: called in order, one call at a time, once the step that made an event released the
    ///   session's lock.
    public func setEventSink(_ sink: (@Sendable (SessionEvent) -> Void)?) {
        outbox.setEventSink(sink)
        updateOutputSwitches()
    }

    /// Installs (or removes) the topic listener: from now on it receives, in input order, once the step that
    /// caused them released the session's lock (one call at a time), the topics the session's pages start
    /// (``TopicEvent/subscribed(_:)``) and stop (``TopicEvent/unsubscribed(_:)``) listening to, and the values they
    /// publish (``TopicEvent/published(_:input:)``). Installing it first hands it `subscribed` for every topic the
    /// live pages listen to already. A server installs it once a session is live (after a restore's replay: a
    /// replay subscribes nothing and publishes nothing) and carries the events to its topic bus.
    /// - Parameter listener: called once per event.
    public func setTopicListener(_ listener: (@Sendable (TopicEvent) -> Void)?) {
        outbox.setTopicListener(listener)
        updateOutputSwitches()
    }

    /// Installs (or removes) a receiver object, held weakly, in place of any installed before: from now on it is
    /// handed the `kinds` of output, as the closures of ``setRecorder(_:)``, ``setEventSink(_:)`` and
    /// ``setTopicListener(_:)`` are (closures installed too keep receiving theirs). An object that owns the session
    /// receives from it this way without a cycle and without a closure per session.
    /// - Parameters:
    ///   - receiver: the receiver; nil removes it.
    ///   - kinds: what it is handed: records, events, topic events.
    public func setReceiver(_ receiver: (any SessionOutputReceiver)?, for kinds: SessionOutputKinds) {
        outbox.setReceiver(receiver, for: kinds)
        updateOutputSwitches()
    }

    /// What the receiver object installed with ``setReceiver(_:for:)`` is handed (empty when there is none).
    public var receiverKinds: SessionOutputKinds { outbox.receiverKinds }

    /// Makes the core queue only what somebody receives: without a recorder it makes no record at all (no digests
    /// either); a topic receiver installed now is handed the topics the pages listen to already.
    private func updateOutputSwitches() {
        let kinds = outbox.receivedKinds
        step { core in
            core.sendsRecords = kinds.contains(.records)
            core.sendsEvents = kinds.contains(.events)
            if core.sendsTopics != kinds.contains(.topics) { core.sendsTopics = kinds.contains(.topics) }
        }
    }

    /// Delivers a value published on a topic to every page of this session subscribed to it, as one input of the
    /// session (``SessionInput/topic(name:value:)``, recorded in its log), through the session's lock like any
    /// input; what it changes goes out as events. A session none of whose pages listens to the topic ignores it.
    /// - Parameter message: the topic and the value.
    /// - Returns: the number of the input record, or nil when no page listens to the topic.
    @discardableResult
    public func receive(_ message: TopicMessage) -> Int? {
        step { core in core.receive(message) ? core.inputNumber : nil }
    }

    /// Runs `body` as a step, inside the session's lock, then hands out what it queued (records and events).
    private func step<Result, Failure: Error>(
        _ body: (SessionCore) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        var unread = InputReceipt()
        return try step(noting: &unread, body)
    }

    /// ``step(_:)``, noting in `receipt` whether the step recorded an input, whether or not it threw.
    private func step<Result, Failure: Error>(
        noting receipt: inout InputReceipt, _ body: (SessionCore) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        defer { outbox.deliver() }
        return try core.withLock { core throws(Failure) in
            let before = core.inputNumber
            defer { receipt.noteStep(from: before, to: core.inputNumber) }
            return try body(core)
        }
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
        try step { core throws(PageError) in
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
        try step { core throws(PageError) in try core.snapshot(of: unit, parameters: parameters) }
    }

    /// The page of `unit` as ``snapshot(of:parameters:)`` gives it, with the session's latest event number
    /// and navigation stack read under the same lock: the page shows every event up to `sequence`.
    /// - Parameters:
    ///   - unit: the unit's name.
    ///   - parameters: route parameters for a page bound now.
    ///   - asDeepLink: whether a page bound now is opened by deep link (a server's `GET /api/pages/{unit}`):
    ///     then a unit that is ``UnitEntry/flowOnly`` and has no live page in the session (on the stack, in the
    ///     forward list or bound by an earlier read) is refused instead of bound.
    /// - Throws: `unknown_unit`, `entry_refused` (only `asDeepLink`), or a binding error; then nothing changed.
    public func read(
        _ unit: String, parameters: [String: String] = [:], asDeepLink: Bool = false
    ) throws(PageError) -> PageRead {
        var receipt = InputReceipt()
        return try read(unit, parameters: parameters, asDeepLink: asDeepLink, noting: &receipt)
    }

    /// ``read(_:parameters:asDeepLink:)``, noting in `receipt` whether it recorded an input (a page it bound).
    /// - Parameters:
    ///   - unit: the unit's name.
    ///   - parameters: route parameters for a page bound now.
    ///   - asDeepLink: whether a page bound now is opened by deep link.
    ///   - receipt: where the step is noted.
    package func read(
        _ unit: String, parameters: [String: String] = [:], asDeepLink: Bool = false, noting receipt: inout InputReceipt
    ) throws(PageError) -> PageRead {
        try step(noting: &receipt) { core throws(PageError) in
            let (snapshot, _) = try core.snapshotAndInput(of: unit, parameters: parameters, asDeepLink: asDeepLink)
            var read = PageRead(
                snapshot: snapshot, sequence: core.sequence, navigation: core.navigationState,
                encodedView: core.encodedView(of: unit))
            read.inputNumber = core.inputNumber
            return read
        }
    }

    /// Delivers one action to a live page and returns what it changed.
    /// - Parameters:
    ///   - action: the action's name (`part.action` for a part's).
    ///   - value: the action's value; `null` for actions without one.
    ///   - unit: the unit's name.
    ///   - clientRevision: the revision the client holds; the patch returned starts there.
    ///   - annotation: kept with the action's input record, uninterpreted (a server's idempotency key).
    /// - Throws: `unknown_unit`, `page_not_bound`, `unknown_action` (with `allowed`), `invalid_value`,
    ///   or `invalid_request` for a revision that is negative or ahead; then nothing changed.
    @discardableResult
    public func perform(
        _ action: String, value: JSONValue = .null, on unit: String, clientRevision: Int? = nil,
        annotation: JSONValue? = nil
    ) throws(PageError) -> ActionResult {
        var receipt = InputReceipt()
        return try perform(action, value: value, on: unit, clientRevision: clientRevision, annotation: annotation, noting: &receipt)
    }

    /// ``perform(_:value:on:clientRevision:annotation:)``, noting in `receipt` whether it recorded an input.
    /// - Parameters:
    ///   - action: the action's name.
    ///   - value: the action's value.
    ///   - unit: the unit's name.
    ///   - clientRevision: the revision the client holds.
    ///   - annotation: kept with the action's input record.
    ///   - receipt: where the step is noted.
    @discardableResult
    package func perform(
        _ action: String, value: JSONValue = .null, on unit: String, clientRevision: Int? = nil,
        annotation: JSONValue? = nil, noting receipt: inout InputReceipt
    ) throws(PageError) -> ActionResult {
        try step(noting: &receipt) { core throws(PageError) in
            try core.perform(action, value: value, on: unit, clientRevision: clientRevision, annotation: annotation)
        }
    }

    /// The number of the session's latest input record (0 before the first).
    public var inputNumber: Int {
        core.withLock { $0.inputNumber }
    }

    /// Replays a session's log into this fresh session (made with a virtual clock): each record is applied
    /// again at its number and time, a logged timer fires where it fired, a logged async result is delivered
    /// instead of running the work again. A page whose replayed events differ from the logged digests (its
    /// code changed) is *diverged*: the log's later actions on it are skipped until a ``SessionInput/rebind(unit:)``
    /// record of it, and it is reported, so that the caller binds it fresh (``rebind(_:)``) and its clients
    /// get a snapshot instead of a wrong patch. Then call ``goLive()``.
    /// - Parameters:
    ///   - records: the log, in number order.
    ///   - replayed: called for every record applied, with the events it caused now and, for an action, its
    ///     result (from inside the session's lock: it must not call back into the session).
    /// - Returns: what the replay found.
    public func restore(
        from records: [InputRecord], recordCap: Int = .max,
        replayed: (InputRecord, [SessionEvent], ActionResult?) -> Void = { _, _, _ in }
    ) -> RestoreReport {
        restore(from: nil, records: records, recordCap: recordCap, replayed: replayed)
    }

    /// Restores a compacted log into this fresh session (made with a virtual clock): first the pages of
    /// `snapshot` are bound again (each from its saved states, see ``RestorableViewModel``; a page whose view
    /// then differs from the snapshot's digest is diverged, reported to be bound fresh), then the records after
    /// it are replayed as ``restore(from:recordCap:replayed:)`` does. Then call ``goLive()``.
    ///
    /// A page whose ViewModel is a ``RestorableViewModel`` is never capped: its records are compacted instead.
    /// - Parameters:
    ///   - snapshot: the log's snapshot (nil: the log starts at its first record).
    ///   - records: the records after the snapshot, in number order.
    ///   - recordCap: the most action records a page without a saved state may have to be replayed.
    ///   - replayed: called for every record applied (see ``restore(from:recordCap:replayed:)``).
    /// - Returns: what the restore found.
    public func restore(
        from snapshot: SessionSnapshot?, records: [InputRecord], recordCap: Int = .max,
        replayed: (InputRecord, [SessionEvent], ActionResult?) -> Void = { _, _, _ in }
    ) -> RestoreReport {
        step { core in
            var report = RestoreReport()
            var diverged = Set<String>()
            var resetBySnapshot = Set<String>()
            if let snapshot {
                let found = core.restore(from: snapshot)
                diverged.formUnion(found.mismatched)
                resetBySnapshot.formUnion(found.boundFresh)
                report.snapshotMismatchedUnits = found.mismatched.sorted()
            }
            // A page with more action records than the cap (since its last rebind) is not replayed at all: it
            // starts out as diverged, so it is bound fresh, and replaying a session stays bounded. Topic messages
            // that changed the page count as actions do (a busy topic would otherwise grow its log for ever).
            var actionCounts: [String: Int] = [:]
            var lastRebind: [String: Int] = [:]
            for record in records {
                switch record.input {
                case .action(let unit, _, _, _): actionCounts[unit, default: 0] += 1
                case .topic: for unit in record.digests.keys { actionCounts[unit, default: 0] += 1 }
                case .rebind(let unit, _):
                    actionCounts[unit] = 0
                    lastRebind[unit] = record.number
                default: break
                }
            }
            // Capped pages stay skipped through the whole log (a page bound again or rebound does not end it). A
            // page with a saved state is not capped: its records are compacted instead.
            let capped = Set(
                actionCounts.filter { unit, count in
                    count > recordCap && core.registry.unit(named: unit)?.isRestorable != true
                }.keys
            ).union(resetBySnapshot)
            report.cappedUnits = capped.sorted()
            var skipped: [(number: Int, unit: String)] = []
            for record in records {
                if case .action(let unit, _, _, _) = record.input, diverged.contains(unit) || capped.contains(unit) {
                    report.skipped += 1
                    skipped.append((record.number, unit))
                    core.absorbLogged(record)
                    continue
                }
                if case .rebind(let unit, _) = record.input { diverged.remove(unit) }
                let result: ActionResult?
                do throws(PageError) {
                    result = try core.replay(record, registry: core.registry)
                } catch {
                    result = nil
                }
                report.replayed += 1
                let events = core.lastReplayed?.events ?? []
                let digests = core.lastReplayed?.record.digests ?? [:]
                var mismatched = false
                for unit in Set(digests.keys).union(record.digests.keys)
                where digests[unit] != record.digests[unit] && !capped.contains(unit) {
                    // A page already diverged is expected to differ until its rebind record.
                    if diverged.insert(unit).inserted { mismatched = true }
                }
                if mismatched { report.mismatchedRecords.append(record.number) }
                if record.input.bindsPages {
                    // A page bound again (pushed anew, the session started over) is fresh: it matches from here.
                    for (unit, digest) in digests where record.digests[unit] == digest { diverged.remove(unit) }
                }
                core.absorbLogged(record)
                replayed(record, events, result)
            }
            core.clearReplayed()
            let live = Set(core.pages.values.map(\.unit.name))
            report.divergedUnits = diverged.union(capped).intersection(live).sorted()
            // Skipped records a rebind stands for (one in the log, or the one the caller makes now) are never
            // needed again: every later replay would skip them too.
            let reboundNow = Set(report.divergedUnits)
            report.supersededRecords = skipped.filter { entry in
                reboundNow.contains(entry.unit) || entry.number < lastRebind[entry.unit] ?? 0
            }.map(\.number)
            return report
        }
    }

    /// The session as it is now, standing for every record up to ``inputNumber``, for a store to keep instead
    /// of those records (compaction); nil when it cannot be written down now (then try again after later
    /// inputs): a timer or an async job is pending, or a live page has no saved state (its ViewModel is not a
    /// ``RestorableViewModel``, or not at a quiet point), was reached by an input since it was bound, and has
    /// not passed `recordCap` actions. Released pages are simply not in it.
    /// - Parameters:
    ///   - annotation: kept in the snapshot, uninterpreted (a server's recent idempotent answers).
    ///   - recordCap: the page record cap: a page without a saved state past it is bound fresh on restore.
    public func takeSnapshot(annotation: JSONValue? = nil, recordCap: Int = .max) -> SessionSnapshot? {
        core.withLock { $0.takeSnapshot(annotation: annotation, recordCap: recordCap) }
    }

    /// Releases the live page of `unit` and binds a fresh one in its place at the same route parameters, its
    /// revision going on, with a `snapshot` event; recorded as a ``SessionInput/rebind(unit:)`` input.
    /// - Parameter unit: the unit's name.
    /// - Returns: the number of its input record; nil when the unit has no live page.
    /// - Throws: a binding error (then the old page stays).
    @discardableResult
    public func rebind(_ unit: String) throws(PageError) -> Int? {
        try step { core throws(PageError) in try core.rebind(unit) }
    }

    /// Switches a session restored on a virtual clock to real time, going on from the time its log reached:
    /// pending timers are armed for what is left of their delays; async jobs whose results were not logged
    /// start now. Does nothing on a real-time session.
    public func goLive() {
        step { core in
            let origin = core.scheduler.wallClockOrigin
            core.scheduler.goLive(catchingUpTo: origin == .zero ? nil : SystemClockReading.now() - origin)
        }
    }

    /// Performs a client-initiated navigation: `back`, `forward`, or `open(unit)`.
    /// - Parameter request: the navigation.
    /// - Throws: `unknown_unit`; `nothing_forward` for `forward` with an empty forward list; `entry_refused` for an
    ///   `open` that would push a unit that is ``UnitEntry/flowOnly``; or a binding error for a unit pushed by
    ///   `open`. A refused navigation changes nothing and is no input of the log.
    @discardableResult
    public func navigate(_ request: ClientNavigation) throws(PageError) -> NavigationResult {
        try step { core throws(PageError) in try core.navigate(request) }
    }

    /// ``navigate(_:)``, noting in `receipt` whether it recorded an input: a navigation that fails after it began
    /// (binding the page it pushes) may have recorded what it did before.
    /// - Parameters:
    ///   - request: the navigation.
    ///   - receipt: where the step is noted.
    @discardableResult
    package func navigate(_ request: ClientNavigation, noting receipt: inout InputReceipt) throws(PageError)
        -> NavigationResult
    {
        try step(noting: &receipt) { core throws(PageError) in try core.navigate(request) }
    }

    /// The navigation stack.
    public var navigation: NavigationState {
        core.withLock { $0.navigationState }
    }

    /// Every live page, sorted by unit name.
    public var pages: [PageSnapshot] {
        core.withLock { $0.snapshots }
    }

    /// Lets the session's idle pages hibernate: each live page that can be bound again exactly as it is now (from
    /// its ViewModels' saved states, see ``RestorableViewModel``, or as it was first bound when nothing reached it
    /// since) keeps only its document, and its View/ViewModel pairs and their streams are released. Reads, catch-up
    /// patches and snapshots go on from the document; the page's next input (an action, a callback) binds it again
    /// first, inside that input, so clients and the log see no difference. A page listening to a topic, and every
    /// page of a session with a timer or an async job pending, stays awake. A server calls this for sessions with no
    /// request for a while (`HIBERNATE_AFTER_SECONDS`).
    /// - Returns: how many pages began to hibernate.
    @discardableResult
    public func hibernateIdlePages() -> Int {
        step { $0.hibernateIdlePages() }
    }

    /// Whether a timer or an async job is pending: then no page of the session hibernates (a server tries again later).
    public var hasPendingTimersOrWork: Bool {
        core.withLock { $0.scheduler.scheduledTimerCount > 0 || $0.scheduler.pendingWorkCount > 0 }
    }

    /// How many live pages hibernate now (see ``hibernateIdlePages()``).
    public var hibernatingPageCount: Int {
        core.withLock { core in core.pages.values.reduce(0) { $0 + ($1.isHibernating ? 1 : 0) } }
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

    /// Returns once everything the session's steps queued before the call (records, events, topic events) is
    /// handed out, delivering it when no other thread is doing so.
    public func waitUntilDelivered() {
        outbox.waitUntilDelivered()
    }

    /// Releases every page and cancels every timer and async job: the session ends.
    /// Returns once what the session's steps queued before is handed out (to the recorder and the event sink).
    public func releaseAll() {
        step { $0.releaseAll() }
        outbox.waitUntilDelivered()
    }

    /// Moves a virtual clock forward, firing due timers, each in its own turn. Does nothing in real time.
    /// - Parameter duration: how far to move.
    public func advanceTime(by duration: Duration) {
        step { $0.scheduler.advance(by: duration) }
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

    /// Brings a timer or a job's result back into the session, as a step.
    func reenter(_ reentry: Scheduler.Reentry) {
        step { $0.reenter(reentry) }
    }
}

/// What ``PageSession/restore(from:replayed:)`` found.
public struct RestoreReport: Sendable, Hashable {
    /// How many records were applied again.
    public var replayed = 0
    /// How many records were skipped (actions on a page already diverged).
    public var skipped = 0
    /// The live pages whose replay did not match their log, by unit name: bind them fresh.
    public var divergedUnits: [String] = []
    /// The numbers of the records at which a page first stopped matching the log.
    public var mismatchedRecords: [Int] = []
    /// The pages whose action records passed the cap: not replayed, bound fresh.
    public var cappedUnits: [String] = []
    /// Records that were skipped and that a rebind stands for (in the log, or the one to make now for a
    /// diverged page): once that rebind is stored they can be removed from the store.
    public var supersededRecords: [Int] = []
    /// The pages of the snapshot restored from whose view did not match the snapshot's digest (their saved
    /// state no longer gives the page they were): among ``divergedUnits``, to bind fresh.
    public var snapshotMismatchedUnits: [String] = []
}

/// The system's wall clock, read where a session's clock begins or resumes (never by a ViewModel).
enum SystemClockReading {
    /// Time since 1970, UTC.
    static func now() -> Duration {
        var reading = timespec()
        clock_gettime(CLOCK_REALTIME, &reading)
        return .seconds(Int64(reading.tv_sec)) + .nanoseconds(Int64(reading.tv_nsec))
    }
}
