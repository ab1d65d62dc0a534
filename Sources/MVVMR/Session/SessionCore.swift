import JSONPatch

/// Everything one session owns: its pages, its navigation stack, its scheduler and its event
/// numbering. It lives inside the session's lock and is only touched there; see `PageSession`.
final class SessionCore: TopicInterestListener {
    private typealias StackEntry = PageStack.Entry

    /// The registry, services and history limits, shared with the server's other sessions.
    let settings: PageSessionSettings
    var registry: UnitRegistry { settings.registry }
    var services: Services { settings.services }
    let scheduler: Scheduler
    var historyLimit: Int { settings.historyLimit }
    var historyByteLimit: Int { settings.historyByteLimit }
    /// How many popped pages the forward list keeps at most; beyond it the oldest is released.
    var forwardLimit: Int { settings.forwardLimit }
    let turn = SessionTurn()
    /// Where events, records and topic events go, handed out once the step released the session's lock; which of
    /// them the core queues is set by the three switches below (a reference and flags rather than a closure each:
    /// every live session keeps them).
    let outbox: SessionOutbox
    /// Queues every event for the event sink.
    var sendsEvents = false
    /// Queues, inside the lock, the topics the pages start and stop listening to and the values they publish
    /// (never while replaying); off when nobody carries them (a session outside a server, or one being restored).
    var sendsTopics = false {
        didSet {
            turn.topicInterestListener = sendsTopics ? self : nil
            guard sendsTopics else { return }
            // What the pages already listen to (a session just restored) is wanted from now on.
            for topic in turn.existingTopics?.topics ?? [] { outbox.queue(.topic(.subscribed(topic))) }
        }
    }
    /// Queues every input's record with the events it caused, in input order; off when the session keeps no log
    /// (then no digest is computed either).
    var sendsRecords = false
    /// Set while a log is being replayed: records are made (for their digests) but not queued.
    var isReplaying = false
    /// Whether an input is being applied: set and cleared only by ``applyInput(recordedAs:ifItThrows:annotation:_:)``.
    /// (Beside the other flags: they share one word of the object.)
    private var isInTurn = false
    /// The record of the latest input and its events, kept only while replaying (to compare with the logged
    /// one); boxed, so that a live session pays one pointer for it.
    private(set) var lastReplayed: ReplayedInput?
    /// The number of the latest input record.
    private(set) var inputNumber = 0
    /// Where the pages' random numbers come from (kept in the log's start record).
    var seed: UInt64 = 0x4D56_564D_5221_5EED
    /// How many pages were bound: each page's generator is seeded from the seed and this.
    private var bindCount = 0
    private(set) var pages = LivePages()
    private var stack = PageStack()
    /// The pages `back` (or an `open` that popped back) took off the stack, nearest first: still bound (in
    /// `pages`), state intact, for `forward`. Every push, present or root clears it and releases them.
    private var forward = PageStack()
    /// The revision every fresh page of a unit goes on past: the last revision of every unit whose page was released
    /// (a live page's revision is in its document: an idle session with one page allocates nothing here), and the
    /// revisions a replayed log reached per page, so that a page bound fresh in place of a diverged one goes on past
    /// them even where the replay (which skipped the diverged page's actions) fell behind.
    private var revisions = UnitRevisions()
    private(set) var sequence = 0
    /// What the input being applied caused so far (empty between inputs, so an idle session holds no event storage).
    private var effects = InputEffects()

    init(
        settings: PageSessionSettings, scheduler: Scheduler, outbox: SessionOutbox
    ) {
        self.settings = settings
        self.outbox = outbox
        self.scheduler = scheduler
        scheduler.turnRunner = self
    }

    // Nothing may keep this core but its page session's lock: no closure captures it, and the scheduler and the turn
    // hold it unowned (read only inside the lock), which is safe only while that stays so.
    deinit {
        // The scheduler and the turn (with its topic subscriptions) hold this core unowned (see
        // ``Scheduler/turnRunner``, ``SessionTurn/topicInterestListener``), and a ViewModel may still hold them.
        scheduler.turnRunner = nil
        turn.topicInterestListener = nil
    }

    /// Runs a timer's action or a job's delivery (`body`) as one input of the session, recorded as `reentry`.
    func runTurn(_ reentry: Scheduler.Reentry, _ body: () -> Void) {
        // A timer or a job belongs to some page's streams; which one is not known, so every awake page counts as
        // reached (none of them is bound again from its first binding by a snapshot). A hibernating page has no
        // streams: nothing of it runs.
        for page in pages.values where !page.isHibernating { page.receivedInput = true }
        let input: SessionInput
        switch reentry {
        case .timer(let ordinal): input = .timer(ordinal)
        case .work(let ordinal, let result): input = .work(ordinal, result)
        }
        applyInput(recordedAs: { _ in input }, body)
    }

    /// Queues that a topic gained its first subscriber or lost its last (never while replaying).
    func topicInterestChanged(_ topic: String, subscribed: Bool) {
        guard !isReplaying, sendsTopics else { return }
        outbox.queue(.topic(subscribed ? .subscribed(topic) : .unsubscribed(topic)))
    }

    var navigationState: NavigationState {
        let presented = stack.last.flatMap { $0.presented ? $0.unit : nil }
        // The units' arrays themselves: the state shares them with the stack and the forward list.
        return NavigationState(stack: stack.units, presented: presented, forward: forward.units)
    }

    /// Whether the live page of `name` waits in the forward list (bound, but not on the stack).
    func isForward(_ name: String) -> Bool {
        forward.contains { $0.unit == name }
    }

    var snapshots: [PageSnapshot] {
        pages.values.map(\.snapshot).sorted { $0.unit < $1.unit }
    }

    // MARK: Operations the session exposes

    func start(at unit: UnitCase, parameters: [String: String], sentValue: JSONValue?) throws(PageError)
        -> NavigationResult
    {
        try applyNavigation(
            .start(
                unit: unit.name, parameters: parameters, value: sentValue, seed: seed, wallClock: scheduler.wallClockOrigin)
        ) {
            () throws(PageError) in
            try navigateForward(.root, to: unit, sentValue: sentValue, parameters: parameters)
        }
    }

    func navigate(_ request: ClientNavigation) throws(PageError) -> NavigationResult {
        switch request {
        case .back:
            return try applyNavigation(.navigate(request)) { () throws(PageError) in goBack(returning: nil) }
        case .forward:
            // Refused before it is an input: nothing to go to changes nothing and is not logged.
            guard !forward.isEmpty else { throw .nothingForward }
            return try applyNavigation(.navigate(request)) { () throws(PageError) in try goForward() }
        case .open(let name, let parameters):
            guard let unit = pages[name]?.unit ?? registry.unit(named: name) else {
                throw PageError(.unknownUnit, "no unit named \(name)")
            }
            let onStack = stack.lastIndex { $0.unit == name }
            let isNextForward = onStack == nil && forward.first?.unit == name
            // Only a push is a deep link; returning to a page the session holds never is. Refused before it is
            // an input, so a refusal changes nothing and is not logged.
            // The registry's rule is the app's (a page a route bound may carry another case of the same name).
            let entry = registry.unit(named: name)?.entry ?? unit.entry
            if onStack == nil, !isNextForward, !entry.admitsDeepLinks { throw .entryRefused(name) }
            return try applyNavigation(.navigate(request)) { () throws(PageError) in
                if let onStack {
                    popAbove(onStack)
                } else if isNextForward {
                    try goForward()
                } else {
                    try navigateForward(.push, to: unit, sentValue: nil, parameters: parameters)
                }
            }
        }
    }

    func snapshot(of name: String, parameters: [String: String]) throws(PageError) -> PageSnapshot {
        try snapshotAndInput(of: name, parameters: parameters).snapshot
    }

    /// The page of `name` (binding it first when it is not live) and the number of the input record the
    /// binding made (nil when the page was live).
    /// - Parameter asDeepLink: whether binding it is a deep link: then a unit that is ``UnitEntry/flowOnly`` and
    ///   has no live page is refused (`entry_refused`) instead of bound.
    func snapshotAndInput(of name: String, parameters: [String: String], asDeepLink: Bool = false) throws(PageError)
        -> (snapshot: PageSnapshot, input: Int?)
    {
        if let page = pages[name] { return (page.snapshot, nil) }
        guard let unit = registry.unit(named: name) else { throw PageError(.unknownUnit, "no unit named \(name)") }
        if asDeepLink, !unit.entry.admitsDeepLinks { throw .entryRefused(name) }
        // A page read that binds is an input; one whose binding fails left nothing behind, so it is none.
        let bound = try applyInput(recordedAs: { _ in .bind(unit: name, parameters: parameters) }) {
            () throws(PageError) in
            try bindOutsideTheStack(unit, parameters: parameters, replacing: nil, revision: nil)
        }
        return (bound.value, inputNumber)
    }

    /// Binds a fresh page of `unit` in `pages` (in place of `replaced`, which is released), outside the
    /// navigation stack, and emits its `snapshot` event: the body of a step. On failure nothing changes.
    private func bindOutsideTheStack(
        _ unit: UnitCase, parameters: [String: String], replacing replaced: BoundPage?, revision: Int?
    ) throws(PageError) -> PageSnapshot {
        let page = try bind(unit, sentValue: nil, parameters: parameters, revision: revision)
        if let replaced {
            turn.forget(replaced.document)
            replaced.release()
        }
        pages[unit.name] = page
        drainWork()
        page.document.absorbChanges()
        turn.forget(page.document)
        let snapshot = page.snapshot
        emit(.snapshot(snapshot))
        return snapshot
    }


    /// The compact JSON text of a live page's view (cached by its document until the next change).
    func encodedView(of name: String) -> [UInt8]? {
        pages[name]?.document.encodedView
    }

    func perform(
        _ action: String, value: JSONValue, on name: String, clientRevision: Int?, annotation: JSONValue? = nil
    ) throws(PageError) -> ActionResult {
        guard let page = pages[name] else {
            if registry.unit(named: name) == nil { throw PageError(.unknownUnit, "no unit named \(name)") }
            throw PageError(.pageNotBound, "\(name) has no live page in this session")
        }
        // A page waiting in the forward list is not on screen: as when `back` released it, it takes no action
        // until it is back on the stack (a route it emitted would navigate from a page the user left).
        if isForward(name) {
            throw PageError(.pageNotBound, "\(name) is in the forward list, not on the stack; go forward to it first")
        }
        let revisionBefore = page.document.revision
        if let clientRevision, clientRevision < 0 || clientRevision > revisionBefore {
            throw PageError(.invalidRequest, "rev \(clientRevision) is not a revision of \(name) (at \(revisionBefore))")
        }
        // A hibernating page is bound again first; an action refused after that puts it back to sleep as it was, so a
        // refusal changes nothing (not even a Model's change the binding again found, which the next action carries).
        let woken = try wake(page)
        let entry: ActionRegistry.Entry
        do throws(PageError) {
            entry = try acceptedEntry(of: page, for: action, value: value)
        } catch {
            if let woken { undoWake(woken, of: page) }
            throw error
        }
        page.receivedInput = true
        page.countAction()
        let applied = applyInput(
            recordedAs: { _ in .action(unit: name, name: action, value: value, clientRevision: clientRevision) },
            annotation: annotation
        ) {
            entry.deliver(value)
        }
        let effects = applied.effects
        let base = clientRevision ?? revisionBefore
        let patch: JSONPatch?
        let snapshot: PageSnapshot?
        if pages[name] === page {
            patch = page.document.catchUp(from: base)
            snapshot = patch == nil ? page.snapshot : nil
        } else {
            // The action released its own page (it routed to root, or back): what it changed before
            // that is in this turn's patch events.
            let operations = effects.events.compactMap { event -> [PatchOperation]? in
                if case .patch(let pagePatch) = event.kind, pagePatch.unit == name { return pagePatch.patch.operations }
                return nil
            }
            patch = base == revisionBefore ? JSONPatch(operations.flatMap { $0 }) : nil
            snapshot = nil
        }
        return ActionResult(
            unit: name, rev: page.document.revision, sequence: sequence, patch: patch, snapshot: snapshot,
            navigation: effects.lastNavigation, navigationFailure: effects.lastNavigationFailure,
            events: effects.events, inputNumber: inputNumber)
    }

    /// The declaration of `action` on `page` (awake) that takes `value`.
    /// - Throws: `unknown_action` (with `allowed`) or `invalid_value`.
    private func acceptedEntry(of page: BoundPage, for action: String, value: JSONValue) throws(PageError)
        -> ActionRegistry.Entry
    {
        guard let entry = page.wiring?.actions.entry(named: action) else {
            throw PageError(
                .unknownAction, "\(page.unit.name) has no action \(action)", allowed: page.unit.actions.map(\.name))
        }
        guard entry.valueType.accepts(value) else {
            throw PageError(.invalidValue, "\(action) takes a value of type \(entry.valueType.rawValue)")
        }
        guard ActionRegistry.isWithinLimit(value, of: entry) else {
            if entry.validate != nil {
                throw PageError(.invalidValue, "\(action) takes a value its schema describes; this one does not decode")
            }
            throw PageError(.invalidValue, "\(action) takes a string of at most \(entry.maxLength ?? 0) characters")
        }
        return entry
    }

    /// Applies a logged input again, as a session restored from its log does: with the record's number
    /// and at its time; what it causes is recorded (``lastReplayed``) to compare with the log, not handed to
    /// the recorder. An input that throws now (its page's code changed) changes nothing.
    /// - Parameter record: the logged record.
    /// - Returns: the action's result, for an action (a server rebuilds its idempotent answers from them).
    /// - Throws: what the input throws when applied now.
    @discardableResult
    func replay(_ record: InputRecord, registry: UnitRegistry) throws(PageError) -> ActionResult? {
        isReplaying = true
        lastReplayed = nil
        defer { isReplaying = false }
        inputNumber = record.number - 1
        scheduler.moveVirtualTime(to: record.time)
        switch record.input {
        case .start(let unitName, let parameters, let value, let loggedSeed, let wallClock):
            guard let unit = registry.unit(named: unitName) else { throw PageError(.unknownUnit, "no unit named \(unitName)") }
            seed = loggedSeed
            scheduler.wallClockOrigin = wallClock
            _ = try start(at: unit, parameters: parameters, sentValue: value)
        case .bind(let unitName, let parameters):
            _ = try snapshotAndInput(of: unitName, parameters: parameters)
        case .action(let unitName, let name, let value, let clientRevision):
            return try perform(name, value: value, on: unitName, clientRevision: clientRevision, annotation: record.annotation)
        case .navigate(let request):
            _ = try navigate(request)
        case .timer(let ordinal):
            if !scheduler.deliver(.timer(ordinal)) { finishStaleReentry(.timer(ordinal)) }
        case .work(let ordinal, let result):
            if !scheduler.deliver(.work(ordinal, result)) { finishStaleReentry(.work(ordinal, result)) }
        case .topic(let name, let value):
            let message = TopicMessage(topic: name, value: value, id: TopicMessage.id(inAnnotation: record.annotation))
            if !receive(message) { finishStaleReentry(record.input) }
        case .rebind(let unitName, let revision):
            // Its one event (the snapshot) gets the number it had, whatever was skipped before it.
            if record.sequence > 0 { sequence = max(sequence, record.sequence - 1) }
            _ = try rebind(unitName, at: revision)
        }
        return nil
    }

    /// Drops what the last replayed input left (a replay is over).
    func clearReplayed() {
        lastReplayed = nil
    }

    /// Takes in a logged record's numbers once it was applied again or skipped: input and event numbers never
    /// go back (a skipped record's still count), and a page bound fresh later goes on past the logged revisions.
    func absorbLogged(_ record: InputRecord) {
        inputNumber = max(inputNumber, record.number)
        sequence = max(sequence, record.sequence)
        for (unit, revision) in record.revisions { revisions.raise(unit, to: revision) }
    }

    /// Delivers a value published on a topic to every page subscribed to it, as one input
    /// (``SessionInput/topic(name:value:)``).
    /// - Returns: whether a page is subscribed (a message nobody here listens to is no input and changes nothing).
    @discardableResult
    func receive(_ message: TopicMessage) -> Bool {
        let units = turn.existingTopics?.units(subscribedTo: message.topic) ?? []
        guard !units.isEmpty else { return false }
        for unit in units { pages[unit]?.receivedInput = true }
        let topics = turn.topics
        let applied = applyInput(
            recordedAs: { _ in .topic(name: message.topic, value: message.value) }, annotation: message.recordAnnotation
        ) {
            topics.deliver(message.value, on: message.topic)
        }
        // A message that changed a page counts towards its record cap, as an action does (the log's digests say
        // which pages it changed, so a restore counts the same).
        for unit in Set(applied.effects.events.map(\.pageUnit)) { pages[unit]?.countAction() }
        return true
    }

    /// A logged timer or job result that no longer finds its timer or job (the code changed): recorded with
    /// no effect, so the comparison with the log notices whatever it had caused.
    private func finishStaleReentry(_ input: SessionInput) {
        applyInput(recordedAs: { _ in input }) { () -> Void in }
    }

    /// Releases the live page of `name` and binds a fresh one at the same route parameters in its place (its
    /// revision goes on), with a `snapshot` event: what a restored session does with a page whose replay no
    /// longer matches its log.
    /// - Parameters:
    ///   - name: the unit's name.
    ///   - revision: the fresh page's revision (a replayed rebind's); by default the next one.
    /// - Returns: the number of the input record, or nil when the unit has no live page.
    @discardableResult
    func rebind(_ name: String, at revision: Int? = nil) throws(PageError) -> Int? {
        guard let existing = pages[name] else { return nil }
        try applyInput(recordedAs: { snapshot in .rebind(unit: name, revision: snapshot.rev) }) {
            () throws(PageError) in
            try bindOutsideTheStack(
                existing.unit, parameters: existing.parameters, replacing: existing, revision: revision)
        }
        return inputNumber
    }


    // MARK: Hibernation

    /// Lets every live page that can be bound again exactly as it is now hibernate (``BoundPage/hibernate(as:)``):
    /// its View/ViewModel pairs and their streams are released, its document stays. A page can when it has saved
    /// states (a ``RestorableViewModel`` at a quiet point) or nothing reached it since it was bound, it listens to no
    /// topic, and the session has no timer or async job pending (a closure in a stream graph). Changes nothing a
    /// client or the log sees: no input, no event.
    /// - Returns: how many pages began to hibernate.
    func hibernateIdlePages() -> Int {
        guard !isReplaying, !isInTurn, scheduler.scheduledTimerCount == 0, scheduler.pendingWorkCount == 0 else {
            return 0
        }
        var count = 0
        for page in pages.values where !page.isHibernating {
            if turn.existingTopics?.hasSubscriptions(of: page.unit.name) == true { continue }
            let hibernation: BoundPage.Hibernation
            if page.isAsFirstBound {
                // Bound again as at first: nothing to keep but its seed.
                hibernation = .bindingAgain
            } else if let states = page.savedStates,
                let saved = BoundPage.Hibernation(savedStates: states, random: page.randomPosition)
            {
                hibernation = saved
            } else {
                continue
            }
            page.hibernate(as: hibernation)
            count += 1
        }
        return count
    }

    /// What a page woken by ``wake(_:)`` was, to put it back to sleep as it was (``undoWake(_:of:)``).
    struct Wake {
        let previousView: JSONValue
        let hibernation: BoundPage.Hibernation
    }

    /// Binds a hibernating page again into its own document, as a restore from a snapshot binds it (from its saved
    /// states, or as it was first bound, its random numbers going on where they were), inside the input that reached
    /// it. The binding is none of the session's: no binding is counted (no later page's seed moves), a timer or job it
    /// starts is cancelled and its ordinal given back (the page had none pending when it began to hibernate: the
    /// session had none), what it queued or published is dropped (it happened when the page was first bound). A view
    /// that comes out equal keeps the text it had (key order and number forms included); one that comes out
    /// different (a Model's data changed meanwhile) is the input's change of the page: its clients get the difference
    /// as a patch.
    /// - Returns: what the page was, to undo the wake; nil when it was awake.
    /// - Throws: `binding_failed` or `missing_service` when it cannot be bound again; then it goes on hibernating.
    @discardableResult
    func wake(_ page: BoundPage) throws(PageError) -> Wake? {
        guard let hibernation = page.hibernation else { return nil }
        let queued = turn.counts
        let publications = turn.existingTopics?.publications.count ?? 0
        let nextOrdinal = scheduler.nextID
        let previous = page.document.beginBindingAgain()
        let woken: BoundPage
        do throws(PageError) {
            woken = try bind(
                page.unit, sentValue: page.sentValue, parameters: page.parameters, savedStates: hibernation.savedStates,
                randomState: hibernation.random(seed: page.randomSeed), into: page.document)
        } catch {
            scheduler.cancel(from: nextOrdinal)
            page.document.abandonBindingAgain(previous: previous)
            throw error
        }
        drainWork()
        turn.truncate(workCount: queued.work, navigationCount: queued.navigations)
        turn.existingTopics?.dropPublications(after: publications)
        scheduler.cancel(from: nextOrdinal)
        page.document.finishBindingAgain(previous: previous)
        page.wake(with: woken)
        return Wake(previousView: previous, hibernation: hibernation)
    }

    /// Puts a page ``wake(_:)`` just woke back to sleep as it was before: its view, its hibernation, no change of
    /// this turn (an action refused after the wake).
    private func undoWake(_ wake: Wake, of page: BoundPage) {
        turn.forget(page.document)
        page.document.abandonBindingAgain(previous: wake.previousView)
        page.hibernate(as: wake.hibernation)
    }

    // MARK: Snapshots

    /// The session as it is now, standing for every record up to ``inputNumber``; nil when it cannot be
    /// written down now: a timer or an async job is pending (a closure in a stream graph), or a live page is
    /// neither saved (a ``RestorableViewModel`` at a quiet point), nor untouched since it was bound, nor past
    /// `recordCap` actions (then it is bound fresh on restore, as a restore from the log would bind it).
    func takeSnapshot(annotation: JSONValue?, recordCap: Int) -> SessionSnapshot? {
        guard !isReplaying, !isInTurn, inputNumber > 0, scheduler.scheduledTimerCount == 0,
            scheduler.pendingWorkCount == 0
        else { return nil }
        var saved: [SessionSnapshot.SavedPage] = []
        for page in pages.values {
            let restoration: SessionSnapshot.Restoration
            var random = page.randomPosition
            // A page nothing reached is bound again as at first, as it hibernates (so a snapshot is the same whether
            // the page hibernates or not), with nothing to encode.
            if page.isAsFirstBound {
                restoration = .bindAgain
                random = page.randomSeed
            } else if let states = page.savedStates {
                restoration = .savedStates(states)
            } else if page.actionCount > recordCap {
                restoration = .boundFresh
                random = page.randomSeed
            } else {
                return nil
            }
            saved.append(
                SessionSnapshot.SavedPage(
                    unit: page.unit.name, parameters: page.parameters, sentValue: page.sentValue,
                    revision: page.document.revision, viewDigest: page.viewDigest, random: random,
                    restoration: restoration))
        }
        var released: [String: Int] = [:]
        for (unit, revision) in revisions.all { released[unit] = revision }
        return SessionSnapshot(
            number: inputNumber, time: scheduler.now, sequence: sequence, seed: seed,
            wallClock: scheduler.wallClockOrigin, bindCount: bindCount, nextOrdinal: scheduler.nextID,
            stack: Array(stack), forward: Array(forward), pages: saved,
            revisions: released, annotation: annotation)
    }

    /// What binding a session's pages from a snapshot found.
    struct SnapshotRestore {
        /// The pages whose restored view does not match the snapshot's digest (or that could not be bound from
        /// their saved states): bound as at first, to be bound fresh by the caller, like a diverged page.
        var mismatched: [String] = []
        /// The pages the snapshot says to bind fresh (they passed the record cap without a saved state).
        var boundFresh: [String] = []
    }

    /// Makes this fresh session (on a virtual clock, nothing bound yet) what `snapshot` says: its numbers, its
    /// clock, its navigation stack, and every page bound again (from its saved states, or as it was first
    /// bound). Emits no event and records nothing.
    func restore(from snapshot: SessionSnapshot) -> SnapshotRestore {
        isReplaying = true
        defer {
            isReplaying = false
            lastReplayed = nil
        }
        var found = SnapshotRestore()
        inputNumber = snapshot.number
        sequence = snapshot.sequence
        seed = snapshot.seed
        scheduler.wallClockOrigin = snapshot.wallClock
        scheduler.moveVirtualTime(to: snapshot.time)
        scheduler.nextID = snapshot.nextOrdinal
        for (unit, revision) in snapshot.revisions { revisions.raise(unit, to: revision) }
        for saved in snapshot.pages {
            guard let unit = registry.unit(named: saved.unit) else { continue }
            var page: BoundPage?
            var fromSavedStates = false
            if case .savedStates(let states) = saved.restoration {
                page = try? bind(
                    unit, sentValue: saved.sentValue, parameters: saved.parameters, revision: saved.revision,
                    savedStates: states, randomState: saved.random)
                // Its state is not the one it was first bound with: never bound again as at first.
                page?.receivedInput = true
                fromSavedStates = page != nil
            }
            if page == nil {
                page = try? bind(
                    unit, sentValue: saved.sentValue, parameters: saved.parameters, revision: saved.revision,
                    randomState: saved.random)
            }
            guard let page else { continue }
            pages[unit.name] = page
            drainWork()
            page.document.absorbChanges()
            turn.forget(page.document)
            if saved.restoration == .boundFresh {
                found.boundFresh.append(unit.name)
            } else if case .savedStates = saved.restoration, !fromSavedStates {
                found.mismatched.append(unit.name)
            } else if page.viewDigest != saved.viewDigest {
                found.mismatched.append(unit.name)
            }
        }
        // A route a page emitted while bound again is not a navigation of the session (the stack is the snapshot's),
        // nor a value it published a publication of the session (what the saved page published went out then).
        while turn.takeNavigation() != nil {}
        _ = turn.existingTopics?.takePublications()
        _ = turn.takeWork()
        turn.clearChangedDocuments()
        bindCount = snapshot.bindCount
        stack = PageStack(snapshot.stack.filter { pages[$0.unit] != nil })
        forward = PageStack(snapshot.forward.filter { pages[$0.unit] != nil })
        return found
    }

    /// Ends an input: numbers and times its record, with the digests of the events it caused (only when
    /// a log is kept), and queues it for the recorder (or keeps it, while replaying). Called by the step only.
    private func finishInput(_ input: SessionInput, annotation: JSONValue?, events: [SessionEvent]) {
        inputNumber += 1
        let publications = turn.existingTopics?.takePublications() ?? []
        defer {
            // After the record (queued in the same order): they go out once it is stored.
            if !isReplaying, sendsTopics {
                for message in publications { outbox.queue(.topic(.published(message, input: inputNumber))) }
            }
        }
        guard sendsRecords || isReplaying else { return }
        let record = InputRecord(
            number: inputNumber, time: scheduler.now, input: input, digests: events.pageDigests,
            annotation: annotation, sequence: sequence, revisions: events.pageRevisions)
        if isReplaying {
            lastReplayed = ReplayedInput(record: record, events: events)
        } else {
            outbox.queue(.record(SessionOutbox.RecordedInput(record, events)))
        }
    }

    func reenter(_ reentry: Scheduler.Reentry) {
        scheduler.deliver(reentry)
    }

    func releaseAll() {
        for page in pages.values { release(page) }
        pages.removeAll()
        stack.removeAll()
        forward.removeAll()
        scheduler.cancelAll()
        _ = turn.takeWork()
        _ = turn.existingTopics?.takePublications()
        while turn.takeNavigation() != nil {}
        turn.clearChangedDocuments()
    }

    // MARK: Steps

    /// What one input caused while it was applied: what its result is built from.
    private struct InputEffects {
        var events: [SessionEvent] = []
        /// The navigations it made and those that failed, in order (one list: most inputs have neither).
        var navigationOutcomes: [Result<Navigation, PageError>] = []

        /// The last navigation it made.
        var lastNavigation: Navigation? {
            for case .success(let navigation) in navigationOutcomes.reversed() { return navigation }
            return nil
        }

        /// The last navigation of it that failed.
        var lastNavigationFailure: PageError? {
            for case .failure(let error) in navigationOutcomes.reversed() { return error }
            return nil
        }
    }

    /// What one step gave: its body's value and what the input caused.
    private struct AppliedInput<Value> {
        let value: Value
        let effects: InputEffects
    }

    /// Whether an input whose body threw still goes into the log.
    private enum ThrownInput {
        /// It left nothing behind (a binding that failed): it is no input.
        case notAnInput
        /// It is this input when it emitted something before it threw (a navigation that failed may have
        /// committed what came before it).
        case anInputIfItEmitted(SessionInput)
    }

    /// Applies one input: the only place an input runs. With a fresh record of what it causes, runs `body` as one
    /// turn, settles it (queued work and navigations, then one patch per changed page) and finishes the input's
    /// record; what it caused is handed back and the session holds none of it after. A step that begins inside
    /// another (a timer fired by a virtual clock moved while an input runs) records its own input but runs within
    /// the outer turn, which settles what it caused.
    /// - Parameters:
    ///   - record: the input to record, made from what `body` returned.
    ///   - thrown: whether the input is recorded when `body` throws.
    ///   - annotation: the caller's attachment for the record.
    ///   - body: what the input does.
    /// - Returns: what `body` returned, with every event, navigation and navigation failure the input caused.
    /// - Throws: what `body` throws, once what it caused before is settled.
    @discardableResult
    private func applyInput<Value, Failure: Error>(
        recordedAs record: (Value) -> SessionInput, ifItThrows thrown: ThrownInput = .notAnInput,
        annotation: JSONValue? = nil, _ body: () throws(Failure) -> Value
    ) throws(Failure) -> AppliedInput<Value> {
        let outer = effects
        let isOutermost = !isInTurn
        effects = InputEffects()
        isInTurn = true
        defer {
            effects = outer
            isInTurn = !isOutermost
            // Publications of an input that was not recorded (it threw before it emitted) go nowhere.
            if isOutermost { _ = turn.existingTopics?.takePublications() }
        }
        let value: Value
        do {
            value = try body()
        } catch {
            if isOutermost { settle() }
            if case .anInputIfItEmitted(let input) = thrown, !effects.events.isEmpty {
                finishInput(input, annotation: annotation, events: effects.events)
            }
            throw error
        }
        if isOutermost { settle() }
        finishInput(record(value), annotation: annotation, events: effects.events)
        return AppliedInput(value: value, effects: effects)
    }

    /// A start or a client navigation as one step, and its result.
    private func applyNavigation(_ input: SessionInput, _ body: () throws(PageError) -> Void) throws(PageError)
        -> NavigationResult
    {
        let applied = try applyInput(recordedAs: { _ in input }, ifItThrows: .anInputIfItEmitted(input), body)
        return NavigationResult(
            navigation: applied.effects.lastNavigation, state: navigationState, sequence: sequence,
            events: applied.effects.events, inputNumber: inputNumber)
    }

    /// Runs queued work and navigations until none is left, then commits the changed pages.
    private func settle() {
        while true {
            drainWork()
            guard let request = turn.takeNavigation() else { break }
            handle(request)
        }
        commitChanges()
    }

    private func drainWork() {
        while true {
            let work = turn.takeWork()
            if work.isEmpty { return }
            for item in work { item() }
        }
    }

    private func commitChanges() {
        // Walk the list in place (committing writes nothing, so it cannot grow meanwhile) and keep its
        // storage: a turn that changes one page allocates no list.
        var index = 0
        defer { turn.clearChangedDocuments() }
        while index < turn.changedDocuments.count {
            let document = turn.changedDocuments[index]
            index += 1
            guard let patch = document.commit() else { continue }
            emit(.patch(PagePatch(unit: document.unit, rev: document.revision, patch: patch)))
        }
    }

    private func emit(_ kind: consuming SessionEvent.Kind) {
        sequence += 1
        let event = SessionEvent(sequence: sequence, kind: kind)
        if sendsEvents { outbox.queue(.event(event)) }
        // Moved into the list, its last use: a copy of an event retains each of its parts.
        effects.events.append(consume event)
    }

    // MARK: Navigation

    private func handle(_ request: NavigationRequest) {
        let route = request.route
        // A page waiting in the forward list is off screen: a route its timers or jobs emit there is dropped (the
        // user left that page; it must not navigate the session from behind).
        if isForward(request.source) { return }
        switch route.kind {
        case .back:
            // Only the page on top can go back; a page below (or one bound outside the stack) cannot
            // pop another page.
            guard stack.last?.unit == request.source else { return }
            goBack(returning: route.value)
        case .forward:
            // No route goes forward (only a client navigation does); nothing to do.
            return
        case .push, .present, .root:
            guard let unit = route.unit else { return }
            do {
                try navigateForward(route.kind, to: unit, sentValue: route.value, parameters: route.parameters)
            } catch {
                effects.navigationOutcomes.append(.failure(error))
            }
        }
    }

    private func navigateForward(
        _ kind: NavigationKind, to unit: UnitCase, sentValue: JSONValue?, parameters: [String: String]
    ) throws(PageError) {
        // Changes made before the navigation are their own patches, emitted before it.
        commitChanges()
        let page = try bind(unit, sentValue: sentValue, parameters: parameters)
        // A new page in the flow: what was popped is no longer ahead of it.
        releaseForward(from: 0)
        if kind == .root {
            for existing in pages.values { release(existing) }
            pages.removeAll()
            stack.removeAll()
        } else if let existing = pages[unit.name] {
            release(existing)
            stack.removeAll { $0.unit == unit.name }
        }
        pages[unit.name] = page
        stack.append(StackEntry(unit: unit.name, presented: kind == .present))
        drainWork()
        // What the new page wrote while this turn went on belongs to its first snapshot.
        page.document.absorbChanges()
        turn.forget(page.document)
        commitChanges()
        record(Navigation(kind: kind, state: navigationState, page: page.snapshot))
    }

    private func goBack(returning value: JSONValue?) {
        guard stack.count > 1 else { return }
        commitChanges()
        keepForward([stack.removeLast()])
        guard let below = stack.last, let page = pages[below.unit] else { return }
        var callbackPatch: PagePatch?
        if let value {
            do throws(PageError) {
                try wake(page)
            } catch {
                // The value cannot reach a page that cannot be bound again: said, as a navigation that failed is.
                effects.navigationOutcomes.append(.failure(error))
            }
            if let callbacks = page.wiring?.callbacks {
                page.receivedInput = true
                turn.enqueue { callbacks.deliver(value) }
            }
            drainWork()
            let firstNewEvent = effects.events.count
            commitChanges()
            callbackPatch = effects.events[firstNewEvent...].lazy.compactMap { event -> PagePatch? in
                if case .patch(let patch) = event.kind, patch.unit == below.unit { return patch }
                return nil
            }.first
        }
        record(
            Navigation(
                kind: .back, state: navigationState, page: page.snapshot,
                callbackPatch: callbackPatch))
    }

    private func popAbove(_ index: Int) {
        guard index < stack.count - 1 else { return }
        commitChanges()
        // Bottom first is nearest first: the page just above `index` is where `forward` goes next.
        let popped = Array(stack[(index + 1)...])
        stack.removeSubrange((index + 1)...)
        keepForward(popped)
        guard let entry = stack.last, let page = pages[entry.unit] else { return }
        record(Navigation(kind: .back, state: navigationState, page: page.snapshot))
    }

    /// Puts the nearest page of the forward list back on top of the stack (presented again if it was), as it
    /// was when it was popped: no binding, its revision and view unchanged.
    private func goForward() throws(PageError) {
        guard let next = forward.first else { throw .nothingForward }
        guard let page = pages[next.unit] else {
            // Never so (a forward entry's page stays in `pages` until the entry goes): refuse rather than trap.
            forward.removeFirst()
            throw .nothingForward
        }
        commitChanges()
        forward.removeFirst()
        stack.append(next)
        record(Navigation(kind: .forward, state: navigationState, page: page.snapshot))
    }

    /// Puts `popped` (nearest first) at the front of the forward list, their pages still bound, and releases the
    /// oldest entries beyond ``forwardLimit``.
    private func keepForward(_ popped: [StackEntry]) {
        forward.insert(contentsOf: popped, at: 0)
        releaseForward(from: forwardLimit)
    }

    /// Releases the pages of the forward list from `index` on and drops their entries.
    private func releaseForward(from index: Int) {
        guard index < forward.count else { return }
        for entry in forward[index...] {
            if let page = pages.removeValue(forKey: entry.unit) { release(page) }
        }
        forward.removeSubrange(index...)
    }

    private func record(_ navigation: Navigation) {
        effects.navigationOutcomes.append(.success(navigation))
        emit(.navigation(navigation))
    }

    // MARK: Binding

    /// Makes a fresh page of `unit`: View, ViewModel and parts, wired; its revision goes on from the
    /// unit's last one. On failure nothing stays behind.
    /// - Parameter existing: the document of a hibernating page to bind again into (emptied by the caller); the
    ///   binding then is not counted as one of the session's (no page's seed moves) and keeps the document's revision.
    private func bind(
        _ unit: UnitCase, sentValue: JSONValue?, parameters: [String: String], revision fixedRevision: Int? = nil,
        savedStates: [JSONValue]? = nil, randomState: UInt64? = nil, into existing: PageDocument? = nil
    ) throws(PageError) -> BoundPage {
        let document: PageDocument
        if let existing {
            document = existing
        } else {
            // A live page of the unit (being replaced) holds its latest revision; a released one, or a replayed
            // log, left one in `revisions`. The fresh page goes on past both.
            var revision = (pages[unit.name]?.document.revision).map { $0 + 1 } ?? 0
            if let floor = revisions[unit.name] { revision = max(revision, floor + 1) }
            if let fixedRevision { revision = fixedRevision }
            document = PageDocument(
                unit: unit.name, revision: revision, historyLimit: historyLimit, historyByteLimit: historyByteLimit,
                turn: turn)
        }
        let registry = ActionRegistry()
        let subscriptions = SubscriptionBag()
        let callbacks = CallbackChannel()
        let queued = turn.counts
        let page = Page(document: document, base: .root, subscriptions: subscriptions, turn: turn)
        var context = UnitContext(
            unit: unit.name, services: services, parameters: parameters, scheduler: scheduler,
            sentValue: sentValue, callbackChannel: callbacks)
        context.sessionTurn = turn
        let randomSeed: UInt64
        if let randomState {
            randomSeed = randomState
            if existing == nil { bindCount += 1 }
        } else {
            bindCount += 1
            var pageSeed = StableDigest()
            pageSeed.combine(Int(bitPattern: UInt(seed)))
            pageSeed.combine(bindCount)
            randomSeed = pageSeed.value
        }
        context.random = SessionRandom(seed: randomSeed)
        var pairs: [BoundPair] = []
        func fail(_ error: PageError) -> PageError {
            subscriptions.dispose()
            turn.truncate(workCount: queued.work, navigationCount: queued.navigations)
            return error
        }
        // Only what this binding tries counts (a name a stream connected later tried is dropped with it).
        _ = turn.existingTopics?.takeInvalidNames()
        do {
            var states = savedStates.map { ArraySlice($0) }
            try bindPairs(
                of: unit, page: page, registry: registry, prefix: "", context: context,
                savedStates: &states, into: &pairs)
            if let states, !states.isEmpty {
                throw PageError(.bindingFailed, "\(unit.name) has fewer parts than its saved states")
            }
        } catch let error as PageError {
            throw fail(error)
        } catch {
            throw fail(PageError(.bindingFailed, "binding \(unit.name) failed: \(error)"))
        }
        if let failure = document.bindingFailures.first {
            throw fail(PageError(.bindingFailed, "binding \(unit.name) failed: \(failure)"))
        }
        if let name = turn.existingTopics?.takeInvalidNames().first {
            let reason = "\"\(name)\" is not a topic name (letters, digits, - and _)"
            throw fail(PageError(.bindingFailed, "binding \(unit.name) failed: \(reason)"))
        }
        guard let pagePair = pairs.first else {
            throw fail(PageError(.bindingFailed, "binding \(unit.name) made no View/ViewModel pair"))
        }
        if existing == nil { document.startRecording() }
        let wiring = BoundPage.Wiring(
            actions: registry, subscriptions: subscriptions, callbacks: callbacks, random: context.random,
            pagePair: pagePair, partPairs: Array(pairs.dropFirst()))
        return BoundPage(
            unit: unit, document: document, parameters: parameters, sentValue: sentValue, randomSeed: randomSeed,
            wiring: wiring)
    }

    /// Binds the pairs of `unit` and its parts, in order; with saved states, each pair takes the next one.
    private func bindPairs(
        of unit: UnitCase, page: Page, registry: ActionRegistry, prefix: String, context: UnitContext,
        savedStates: inout ArraySlice<JSONValue>?,
        into pairs: inout [BoundPair]
    ) throws {
        var state: JSONValue?
        if savedStates != nil {
            guard let next = savedStates?.popFirst() else {
                throw PageError(.bindingFailed, "\(unit.name) has more parts than its saved states")
            }
            state = next
        }
        pairs.append(try unit.bindPair(context, registry, prefix, page, state))
        for part in unit.parts {
            let partPage = page.part(at: part.path)
            if page.document.snapshotView[partPage.base] == nil {
                page.document.write(.object(JSONObject()), at: partPage.base)
            }
            try bindPairs(
                of: part.unit, page: partPage, registry: registry, prefix: prefix + part.name + ".", context: context,
                savedStates: &savedStates, into: &pairs)
        }
    }

    private func release(_ page: BoundPage) {
        turn.forget(page.document)
        revisions.raise(page.unit.name, to: page.document.revision)
        page.release()
    }
}

/// An input applied again from a log: the record it made now, and the events it caused.
final class ReplayedInput {
    let record: InputRecord
    let events: [SessionEvent]

    init(record: InputRecord, events: [SessionEvent]) {
        self.record = record
        self.events = events
    }
}
