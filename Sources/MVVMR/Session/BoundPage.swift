import JSONPatch

/// One live page of a session: its document, its actions, and the View/ViewModel pairs (the page's
/// and its parts') kept alive until it is released.
///
/// A page idle for a while can *hibernate* (``hibernate(as:)``): its View/ViewModel pairs and their stream graph are
/// released, and only its document (what a read shows, and the patches kept for clients behind) and how to bind it
/// again are kept. Its next input wakes it: the session binds it again from its saved states, or as it was first
/// bound, into the same document (see `SessionCore.wake(_:)`).
final class BoundPage {
    /// What a page keeps only while it is awake: what its inputs reach, and the objects its streams live in (an
    /// object of its own, so that a hibernating page is a small one).
    final class Wiring {
        let actions: ActionRegistry
        let subscriptions: SubscriptionBag
        let callbacks: CallbackChannel
        /// The page's random numbers (`context.random`).
        let random: SessionRandom
        /// The page's own View/ViewModel pair, and its parts' in binding order: a page without parts keeps no array.
        let pagePair: BoundPair
        let partPairs: [BoundPair]

        init(
            actions: ActionRegistry, subscriptions: SubscriptionBag, callbacks: CallbackChannel, random: SessionRandom,
            pagePair: BoundPair, partPairs: [BoundPair]
        ) {
            self.actions = actions
            self.subscriptions = subscriptions
            self.callbacks = callbacks
            self.random = random
            self.pagePair = pagePair
            self.partPairs = partPairs
        }
    }

    /// How a hibernating page is bound again.
    struct Hibernation {
        /// Its ViewModels' saved states (the page's first) as one JSON array's compact text (a few bytes in one
        /// allocation, where the values would be a tree of them), or nil: bound again as it was first bound.
        let savedStatesText: [UInt8]?
        /// Where its random numbers go on from (its seed when bound as at first).
        let random: UInt64

        /// Bound again as it was first bound: the seed its random numbers started from.
        init(bindingAgainFrom seed: UInt64) {
            savedStatesText = nil
            random = seed
        }

        /// Bound again from `savedStates`, its random numbers going on from `random`; nil when the states' text does
        /// not read back as the same values (then the page stays awake).
        init?(savedStates: [JSONValue], random: UInt64) {
            let text = JSONValue.array(savedStates).jsonBytes
            guard (try? JSONValue(parsing: text)) == .array(savedStates) else { return nil }
            savedStatesText = text
            self.random = random
        }

        /// The saved states, read back from their text (checked to read back when the page began to hibernate).
        var savedStates: [JSONValue]? {
            guard let savedStatesText, case .array(let states)? = try? JSONValue(parsing: savedStatesText) else {
                return nil
            }
            return states
        }
    }

    let unit: UnitCase
    let document: PageDocument
    /// The route parameters it was bound with (a page bound fresh in its place gets them again).
    let parameters: [String: String]
    /// The value the router sent it (a snapshot keeps it, so the restored page gets it again).
    let sentValue: JSONValue?
    /// Whether anything reached the page since it was bound (an action, a callback, a timer or an async result
    /// of the session): a page nothing reached is restored by binding it again as it was first bound.
    /// (Right after `sentValue`, whose last word has room for it.)
    var receivedInput = false
    /// Where the page's random numbers started.
    let randomSeed: UInt64
    /// The revision it was bound at.
    let boundRevision: Int
    /// The action records applied to it since it was bound, and the topic messages that changed it (what
    /// `MAX_PAGE_RECORDS` counts).
    var actionCount = 0
    /// What it keeps while awake; nil while it hibernates and once it is released.
    private(set) var wiring: Wiring?
    /// How to bind it again, while it hibernates.
    private(set) var hibernation: Hibernation?

    /// The page's pair, then its parts', in binding order (none while it hibernates or once released).
    var pairs: [BoundPair] {
        guard let wiring else { return [] }
        return [wiring.pagePair] + wiring.partPairs
    }

    /// Whether it hibernates: its document is kept, its View/ViewModel pairs are not.
    var isHibernating: Bool { hibernation != nil }

    init(
        unit: UnitCase, document: PageDocument, parameters: [String: String], sentValue: JSONValue?,
        randomSeed: UInt64, boundRevision: Int, wiring: Wiring
    ) {
        self.parameters = parameters
        self.unit = unit
        self.document = document
        self.sentValue = sentValue
        self.randomSeed = randomSeed
        self.boundRevision = boundRevision
        self.wiring = wiring
    }

    var snapshot: PageSnapshot {
        PageSnapshot(unit: unit.name, rev: document.revision, view: document.snapshotView, actions: unit.actions)
    }

    /// Where its random numbers go on from: the generator's state (while it hibernates, the one it will go on from).
    var randomPosition: UInt64 {
        wiring?.random.position ?? hibernation?.random ?? randomSeed
    }

    /// The saved states of its ViewModels (the page's, then its parts', in binding order) as JSON; nil when one
    /// of them is not a ``RestorableViewModel`` or not at a quiet point (while it hibernates: the states it keeps).
    var savedStates: [JSONValue]? {
        if let hibernation { return hibernation.savedStates }
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

    /// Releases its View/ViewModel pairs and their streams, keeping its document and `hibernation`: how it is bound
    /// again when an input reaches it.
    func hibernate(as hibernation: Hibernation) {
        wiring?.subscriptions.dispose()
        wiring = nil
        self.hibernation = hibernation
    }

    /// Takes the wiring of `woken`, a page just bound again into this page's document, and stops hibernating.
    func wake(with woken: BoundPage) {
        wiring = woken.wiring
        woken.wiring = nil
        hibernation = nil
    }

    /// Disposes every subscription (which breaks every cycle in the stream graph) and drops the pairs.
    func release() {
        wiring?.subscriptions.dispose()
        wiring = nil
        hibernation = nil
    }
}
