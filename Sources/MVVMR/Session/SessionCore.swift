import JSONPatch

/// Everything one session owns: its pages, its navigation stack, its scheduler and its event
/// numbering. It lives inside the session's lock and is only touched there; see `PageSession`.
final class SessionCore {
    private struct StackEntry {
        let unit: String
        let presented: Bool
    }

    let registry: UnitRegistry
    let services: Services
    let scheduler: Scheduler
    let historyLimit: Int
    let historyByteLimit: Int
    let turn = SessionTurn()
    var eventSink: (@Sendable (SessionEvent) -> Void)?
    private(set) var pages = LivePages()
    private var stack: [StackEntry] = []
    /// The last revision of every unit whose page was released, so a fresh pair goes on from it (a live
    /// page's revision is in its document: an idle session with one page allocates nothing here).
    private var revisions = UnitRevisions()
    private(set) var sequence = 0
    private var isInTurn = false
    /// What the current operation caused, to build its result.
    private var events: [SessionEvent] = []
    private var navigations: [Navigation] = []
    private var navigationFailures: [PageError] = []

    init(registry: UnitRegistry, services: Services, scheduler: Scheduler, historyLimit: Int, historyByteLimit: Int = .max) {
        self.registry = registry
        self.services = services
        self.scheduler = scheduler
        self.historyLimit = historyLimit
        self.historyByteLimit = historyByteLimit
        scheduler.runTurn = { [weak self] body in
            guard let self else { return body() }
            beginOperation()
            runTurn(body)
            beginOperation()
        }
    }

    var navigationState: NavigationState {
        let presented = stack.last.flatMap { $0.presented ? $0.unit : nil }
        return NavigationState(stack: stack.map(\.unit), presented: presented)
    }

    var snapshots: [PageSnapshot] {
        pages.values.map(\.snapshot).sorted { $0.unit < $1.unit }
    }

    // MARK: Operations the session exposes

    func start(at unit: UnitCase, parameters: [String: String], sentValue: JSONValue?) throws(PageError)
        -> NavigationResult
    {
        try navigationOperation { () throws(PageError) in
            try navigateForward(.root, to: unit, sentValue: sentValue, parameters: parameters)
        }
    }

    func navigate(_ request: ClientNavigation) throws(PageError) -> NavigationResult {
        switch request {
        case .back:
            return try navigationOperation { () throws(PageError) in goBack(returning: nil) }
        case .open(let name, let parameters):
            guard let unit = pages[name]?.unit ?? registry.unit(named: name) else {
                throw PageError(.unknownUnit, "no unit named \(name)")
            }
            return try navigationOperation { () throws(PageError) in
                if let index = stack.lastIndex(where: { $0.unit == name }) {
                    popAbove(index)
                } else {
                    try navigateForward(.push, to: unit, sentValue: nil, parameters: parameters)
                }
            }
        }
    }

    func snapshot(of name: String, parameters: [String: String]) throws(PageError) -> PageSnapshot {
        if let page = pages[name] { return page.snapshot }
        guard let unit = registry.unit(named: name) else { throw PageError(.unknownUnit, "no unit named \(name)") }
        beginOperation()
        isInTurn = true
        defer {
            settle()
            isInTurn = false
            beginOperation()
        }
        let page = try bind(unit, sentValue: nil, parameters: parameters)
        pages[name] = page
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

    func perform(_ action: String, value: JSONValue, on name: String, clientRevision: Int?) throws(PageError)
        -> ActionResult
    {
        guard let page = pages[name] else {
            if registry.unit(named: name) == nil { throw PageError(.unknownUnit, "no unit named \(name)") }
            throw PageError(.pageNotBound, "\(name) has no live page in this session")
        }
        guard let entry = page.actions.entry(named: action) else {
            throw PageError(
                .unknownAction, "\(name) has no action \(action)", allowed: page.unit.actions.map(\.name))
        }
        guard entry.valueType.accepts(value) else {
            throw PageError(.invalidValue, "\(action) takes a value of type \(entry.valueType.rawValue)")
        }
        let revisionBefore = page.document.revision
        if let clientRevision, clientRevision < 0 || clientRevision > revisionBefore {
            throw PageError(.invalidRequest, "rev \(clientRevision) is not a revision of \(name) (at \(revisionBefore))")
        }
        beginOperation()
        runTurn {
            for delivery in entry.deliveries { delivery(value) }
        }
        let base = clientRevision ?? revisionBefore
        let patch: JSONPatch?
        let snapshot: PageSnapshot?
        if pages[name] === page {
            patch = page.document.catchUp(from: base)
            snapshot = patch == nil ? page.snapshot : nil
        } else {
            // The action released its own page (it routed to root, or back): what it changed before
            // that is in this turn's patch events.
            let operations = events.compactMap { event -> [PatchOperation]? in
                if case .patch(let pagePatch) = event.kind, pagePatch.unit == name { return pagePatch.patch.operations }
                return nil
            }
            patch = base == revisionBefore ? JSONPatch(operations.flatMap { $0 }) : nil
            snapshot = nil
        }
        let result = ActionResult(
            unit: name, rev: page.document.revision, sequence: sequence, patch: patch, snapshot: snapshot,
            navigation: navigations.last, navigationFailure: navigationFailures.last, events: events)
        beginOperation()
        return result
    }

    func reenter(_ reentry: Scheduler.Reentry) {
        scheduler.deliver(reentry)
    }

    func releaseAll() {
        for page in pages.values { release(page) }
        pages.removeAll()
        stack = []
        scheduler.cancelAll()
        _ = turn.takeWork()
        while turn.takeNavigation() != nil {}
        turn.clearChangedDocuments()
    }

    // MARK: Turns

    /// Forgets what the previous operation caused; also called once a result is built, so an idle
    /// session holds no stale snapshots.
    private func beginOperation() {
        // Not keeping capacity: an idle session then holds no event storage at all, at the cost of
        // one allocation in a turn that emits.
        if !events.isEmpty { events.removeAll() }
        if !navigations.isEmpty { navigations.removeAll() }
        if !navigationFailures.isEmpty { navigationFailures.removeAll() }
    }

    private func navigationOperation(_ body: () throws(PageError) -> Void) throws(PageError) -> NavigationResult {
        beginOperation()
        isInTurn = true
        defer { isInTurn = false }
        do {
            try body()
        } catch {
            settle()
            throw error
        }
        settle()
        let result = NavigationResult(
            navigation: navigations.last, state: navigationState, sequence: sequence, events: events)
        beginOperation()
        return result
    }

    /// Runs `body` and everything it causes as one turn: one patch per changed page at the end.
    private func runTurn(_ body: () -> Void) {
        if isInTurn { return body() }
        isInTurn = true
        body()
        settle()
        isInTurn = false
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
            let pagePatch = PagePatch(unit: document.unit, rev: document.revision, patch: patch)
            emit(.patch(pagePatch))
        }
    }

    private func emit(_ kind: SessionEvent.Kind) {
        sequence += 1
        let event = SessionEvent(sequence: sequence, kind: kind)
        events.append(event)
        eventSink?(event)
    }

    // MARK: Navigation

    private func handle(_ request: NavigationRequest) {
        let route = request.route
        switch route.kind {
        case .back:
            // Only the page on top can go back; a page below (or one bound outside the stack) cannot
            // pop another page.
            guard stack.last?.unit == request.source else { return }
            goBack(returning: route.value)
        case .push, .present, .root:
            guard let unit = route.unit else { return }
            do {
                try navigateForward(route.kind, to: unit, sentValue: route.value, parameters: route.parameters)
            } catch {
                navigationFailures.append(error)
            }
        }
    }

    private func navigateForward(
        _ kind: NavigationKind, to unit: UnitCase, sentValue: JSONValue?, parameters: [String: String]
    ) throws(PageError) {
        // Changes made before the navigation are their own patches, emitted before it.
        commitChanges()
        let page = try bind(unit, sentValue: sentValue, parameters: parameters)
        if kind == .root {
            for existing in pages.values { release(existing) }
            pages.removeAll()
            stack = []
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
        record(Navigation(kind: kind, unit: unit.name, state: navigationState, page: page.snapshot))
    }

    private func goBack(returning value: JSONValue?) {
        guard stack.count > 1 else { return }
        commitChanges()
        let top = stack.removeLast()
        if let page = pages.removeValue(forKey: top.unit) { release(page) }
        guard let below = stack.last, let page = pages[below.unit] else { return }
        var callbackPatch: PagePatch?
        if let value {
            let callbacks = page.callbacks
            turn.enqueue { callbacks.deliver(value) }
            drainWork()
            let firstNewEvent = events.count
            commitChanges()
            callbackPatch = events[firstNewEvent...].lazy.compactMap { event -> PagePatch? in
                if case .patch(let patch) = event.kind, patch.unit == below.unit { return patch }
                return nil
            }.first
        }
        record(
            Navigation(
                kind: .back, unit: below.unit, state: navigationState, page: page.snapshot,
                callbackPatch: callbackPatch))
    }

    private func popAbove(_ index: Int) {
        guard index < stack.count - 1 else { return }
        commitChanges()
        while stack.count > index + 1 {
            let top = stack.removeLast()
            if let page = pages.removeValue(forKey: top.unit) { release(page) }
        }
        guard let entry = stack.last, let page = pages[entry.unit] else { return }
        record(Navigation(kind: .back, unit: entry.unit, state: navigationState, page: page.snapshot))
    }

    private func record(_ navigation: Navigation) {
        navigations.append(navigation)
        emit(.navigation(navigation))
    }

    // MARK: Binding

    /// Makes a fresh page of `unit`: View, ViewModel and parts, wired; its revision goes on from the
    /// unit's last one. On failure nothing stays behind.
    private func bind(_ unit: UnitCase, sentValue: JSONValue?, parameters: [String: String]) throws(PageError)
        -> BoundPage
    {
        // A live page of the unit (being replaced) holds its latest revision; a released one left it in
        // `revisions`. Either way the fresh page goes on from there.
        let revision = (pages[unit.name]?.document.revision ?? revisions[unit.name]).map { $0 + 1 } ?? 0
        let document = PageDocument(
            unit: unit.name, revision: revision, historyLimit: historyLimit, historyByteLimit: historyByteLimit, turn: turn)
        let registry = ActionRegistry()
        let subscriptions = SubscriptionBag()
        let callbacks = CallbackChannel()
        let queued = turn.counts
        let page = Page(document: document, base: .root, subscriptions: subscriptions, turn: turn)
        let context = UnitContext(
            unit: unit.name, services: services, parameters: parameters, scheduler: scheduler,
            sentValue: sentValue, callbackChannel: callbacks)
        var pairs: [BoundPair] = []
        func fail(_ error: PageError) -> PageError {
            subscriptions.dispose()
            turn.truncate(workCount: queued.work, navigationCount: queued.navigations)
            return error
        }
        do {
            try bindPairs(of: unit, page: page, actions: Actions(registry: registry, prefix: ""), context: context,
                          into: &pairs)
        } catch let error as PageError {
            throw fail(error)
        } catch {
            throw fail(PageError(.bindingFailed, "binding \(unit.name) failed: \(error)"))
        }
        if let failure = document.bindingFailures.first {
            throw fail(PageError(.bindingFailed, "binding \(unit.name) failed: \(failure)"))
        }
        document.startRecording()
        return BoundPage(
            unit: unit, document: document, actions: registry, subscriptions: subscriptions, callbacks: callbacks,
            pairs: pairs)
    }

    private func bindPairs(
        of unit: UnitCase, page: Page, actions: Actions, context: UnitContext, into pairs: inout [BoundPair]
    ) throws {
        pairs.append(try unit.bindPair(context, actions, page))
        for part in unit.parts {
            let partPage = page.part(at: part.path)
            if page.document.snapshotView[partPage.base] == nil {
                page.document.write(.object(JSONObject()), at: partPage.base)
            }
            let partActions = Actions(registry: actions.registry, prefix: actions.prefix + part.name + ".")
            try bindPairs(of: part.unit, page: partPage, actions: partActions, context: context, into: &pairs)
        }
    }

    private func release(_ page: BoundPage) {
        turn.forget(page.document)
        revisions[page.unit.name] = page.document.revision
        page.release()
    }
}
