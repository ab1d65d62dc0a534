/// The bookkeeping of one turn of a session (one action, one timer, one async result): the work and
/// navigations queued while it runs, and the pages it changed.
///
/// The session's lock is not re-entrant, so nothing caused inside a turn (a route, a callback to
/// the page below) re-enters it: it is queued here and run before the turn ends.
final class SessionTurn {
    private(set) var pendingWork: [() -> Void] = []
    private(set) var pendingNavigations: [NavigationRequest] = []
    private(set) var changedDocuments: [PageDocument] = []
    private var topicsStorage: TopicSubscriptions?
    /// Told when a topic gains its first subscriber or loses its last: the session core, while it sends topic
    /// events. Unowned, and cleared by the core's `deinit` (the core owns the turn): a weak reference would give
    /// the core a 32-byte side table in every session that joined its server's topics. Read only inside the
    /// session's lock.
    unowned(unsafe) var topicInterestListener: (any TopicInterestListener)? {
        didSet { topicsStorage?.interestListener = topicInterestListener }
    }

    /// The session's topic subscriptions and the values its pages publish (one per session, like the turn), made
    /// when a page first listens to or publishes on a topic: most pages never do, and an idle session should not
    /// pay for them.
    var topics: TopicSubscriptions {
        if let topicsStorage { return topicsStorage }
        let created = TopicSubscriptions()
        created.interestListener = topicInterestListener
        topicsStorage = created
        return created
    }

    /// The topic subscriptions when a page ever made them; nil otherwise (reading this makes nothing).
    var existingTopics: TopicSubscriptions? { topicsStorage }

    func enqueue(_ work: @escaping () -> Void) {
        pendingWork.append(work)
    }

    func requestNavigation(_ route: Route, from unit: String) {
        pendingNavigations.append(NavigationRequest(route: route, source: unit))
    }

    func markChanged(_ document: PageDocument) {
        changedDocuments.append(document)
    }

    func takeWork() -> [() -> Void] {
        // Swapping in an empty array allocates nothing; the common turn queues no work at all.
        var taken: [() -> Void] = []
        swap(&taken, &pendingWork)
        return taken
    }

    func takeNavigation() -> NavigationRequest? {
        pendingNavigations.isEmpty ? nil : pendingNavigations.removeFirst()
    }

    /// Empties the list of changed documents, keeping its storage for the next turn.
    func clearChangedDocuments() {
        changedDocuments.removeAll(keepingCapacity: true)
    }

    /// Forgets a released page's uncommitted writes.
    func forget(_ document: PageDocument) {
        changedDocuments.removeAll { $0 === document }
    }

    /// Drops what a failed binding queued.
    func truncate(workCount: Int, navigationCount: Int) {
        if pendingWork.count > workCount { pendingWork.removeLast(pendingWork.count - workCount) }
        if pendingNavigations.count > navigationCount {
            pendingNavigations.removeLast(pendingNavigations.count - navigationCount)
        }
    }

    var counts: (work: Int, navigations: Int) { (pendingWork.count, pendingNavigations.count) }
}

/// A route emitted by a page, waiting for its turn.
struct NavigationRequest {
    let route: Route
    /// The unit whose page emitted the route.
    let source: String
}
