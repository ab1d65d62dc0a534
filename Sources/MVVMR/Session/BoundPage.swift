import JSONPatch

/// One live page of a session: its document, its actions, and the View/ViewModel pairs (the page's
/// and its parts') kept alive until it is released.
final class BoundPage {
    let unit: UnitCase
    let document: PageDocument
    let actions: ActionRegistry
    let subscriptions: SubscriptionBag
    let callbacks: CallbackChannel
    /// The route parameters it was bound with (a page bound fresh in its place gets them again).
    let parameters: [String: String]
    /// The value the router sent it (a snapshot keeps it, so the restored page gets it again).
    let sentValue: JSONValue?
    /// Whether anything reached the page since it was bound (an action, a callback, a timer or an async result
    /// of the session): a page nothing reached is restored by binding it again as it was first bound.
    /// (Right after `sentValue`, whose last word has room for it.)
    var receivedInput = false
    /// The page's random numbers (`context.random`), and where they started.
    let random: SessionRandom
    let randomSeed: UInt64
    /// The revision it was bound at.
    let boundRevision: Int
    /// The action records applied to it since it was bound, and the topic messages that changed it (what
    /// `MAX_PAGE_RECORDS` counts).
    var actionCount = 0
    /// The page's own View/ViewModel pair (nil once released), and its parts' in binding order: a page without parts
    /// keeps no array.
    private var pagePair: BoundPair?
    private var partPairs: [BoundPair]

    /// The page's pair, then its parts', in binding order (none once released).
    var pairs: [BoundPair] {
        guard let pagePair else { return [] }
        return [pagePair] + partPairs
    }

    init(
        unit: UnitCase, document: PageDocument, actions: ActionRegistry, subscriptions: SubscriptionBag,
        callbacks: CallbackChannel, parameters: [String: String], sentValue: JSONValue?, random: SessionRandom,
        randomSeed: UInt64, pairs: [BoundPair]
    ) {
        self.parameters = parameters
        self.unit = unit
        self.document = document
        self.actions = actions
        self.subscriptions = subscriptions
        self.callbacks = callbacks
        self.sentValue = sentValue
        self.random = random
        self.randomSeed = randomSeed
        self.boundRevision = document.revision
        self.pagePair = pairs.first
        self.partPairs = Array(pairs.dropFirst())
    }

    var snapshot: PageSnapshot {
        PageSnapshot(unit: unit.name, rev: document.revision, view: document.snapshotView, actions: unit.actions)
    }

    /// The saved states of its ViewModels (the page's, then its parts', in binding order) as JSON; nil when one
    /// of them is not a ``RestorableViewModel`` or not at a quiet point.
    var savedStates: [JSONValue]? {
        var states: [JSONValue] = []
        for pair in pairs {
            guard let state = pair.savedState else { return nil }
            states.append(state)
        }
        return states
    }

    /// A digest of the page's view (its compact JSON text): a page restored from a snapshot must match it.
    var viewDigest: UInt64 {
        var digest = StableDigest()
        digest.combine(document.encodedView)
        return digest.value
    }

    /// Disposes every subscription (which breaks every cycle in the stream graph) and drops the pairs.
    func release() {
        subscriptions.dispose()
        pagePair = nil
        partPairs = []
    }
}
