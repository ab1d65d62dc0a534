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

    /// How a hibernating page is bound again: one array (so that a page is no larger for being able to hibernate:
    /// an array, unlike an optional one, leaves the page's state its spare bits for its case). Empty: bound again as
    /// it was first bound, its random numbers from its seed. Otherwise: where its random numbers go on from (8
    /// bytes), then its ViewModels' saved states (the page's first) as one JSON array's compact text (a few bytes in
    /// one allocation, where the values would be a tree of them).
    struct Hibernation {
        private let packed: [UInt8]

        /// Bound again as it was first bound (its random numbers from its seed).
        static let bindingAgain = Hibernation(packed: [])

        private init(packed: [UInt8]) {
            self.packed = packed
        }

        /// Bound again from `savedStates`, its random numbers going on from `random`; nil when the states' text does
        /// not read back as the same values (then the page stays awake).
        init?(savedStates: [JSONValue], random: UInt64) {
            let text = JSONValue.array(savedStates).jsonBytes
            guard (try? JSONValue(parsing: text)) == .array(savedStates) else { return nil }
            var packed: [UInt8] = []
            packed.reserveCapacity(8 + text.count)
            for shift in stride(from: 0, to: 64, by: 8) { packed.append(UInt8(truncatingIfNeeded: random >> UInt64(shift))) }
            packed.append(contentsOf: text)
            self.packed = packed
        }

        /// Where its random numbers go on from: `seed` when it is bound again as at first.
        func random(seed: UInt64) -> UInt64 {
            guard packed.count >= 8 else { return seed }
            var random: UInt64 = 0
            for index in 0..<8 { random |= UInt64(packed[index]) << UInt64(index * 8) }
            return random
        }

        /// The saved states, read back from their text (checked to read back when the page began to hibernate); nil
        /// when it is bound again as at first.
        var savedStates: [JSONValue]? {
            guard packed.count > 8, case .array(let states)? = try? JSONValue(parsing: packed[8...]) else {
                return nil
            }
            return states
        }
    }

    let unit: UnitCase
    let document: PageDocument
    /// The route parameters and the value the router sent, for the pages that have either: one reference (nil for
    /// most pages) rather than their 25 bytes in every page.
    private final class Arguments {
        let parameters: [String: String]
        let sentValue: JSONValue?

        init(parameters: [String: String], sentValue: JSONValue?) {
            self.parameters = parameters
            self.sentValue = sentValue
        }
    }

    private let arguments: Arguments?
    /// The route parameters it was bound with (a page bound fresh in its place gets them again).
    var parameters: [String: String] { arguments?.parameters ?? [:] }
    /// The value the router sent it (a snapshot keeps it, so the restored page gets it again).
    var sentValue: JSONValue? { arguments?.sentValue }
    /// Whether anything reached the page since it was bound (an action, a callback, a timer or an async result
    /// of the session): a page nothing reached is restored by binding it again as it was first bound.
    /// (Beside `countedActions`: they share one word.)
    var receivedInput = false
    /// ``actionCount``, in 32 bits (it stops at their largest, far past any record cap).
    private var countedActions: Int32 = 0
    /// Where the page's random numbers started.
    let randomSeed: UInt64
    /// The revision it was bound at (its document's when the page was made).
    let boundRevision: Int
    /// Awake (with its wiring), hibernating (with how to bind it again), or released: one field, so that a page is
    /// no larger for being able to hibernate.
    private enum State {
        case awake(Wiring)
        case hibernating(Hibernation)
        case released
    }

    private var state: State

    /// The action records applied to it since it was bound, and the topic messages that changed it (what
    /// `MAX_PAGE_RECORDS` counts).
    var actionCount: Int { Int(countedActions) }

    /// Counts one more action record (or topic message that changed it).
    func countAction() {
        if countedActions < .max { countedActions += 1 }
    }

    /// What it keeps while awake; nil while it hibernates and once it is released.
    var wiring: Wiring? {
        if case .awake(let wiring) = state { return wiring }
        return nil
    }

    /// How to bind it again, while it hibernates.
    var hibernation: Hibernation? {
        if case .hibernating(let hibernation) = state { return hibernation }
        return nil
    }

    /// The page's pair, then its parts', in binding order (none while it hibernates or once released).
    var pairs: [BoundPair] {
        guard let wiring else { return [] }
        return [wiring.pagePair] + wiring.partPairs
    }

    /// Whether it is as it was first bound: nothing reached it since and its view never moved, so binding it again
    /// the same way (from its seed) gives it back (a snapshot's and a hibernation's cheapest way).
    var isAsFirstBound: Bool { !receivedInput && document.revision == boundRevision }

    /// Whether it hibernates: its document is kept, its View/ViewModel pairs are not.
    var isHibernating: Bool {
        if case .hibernating = state { return true }
        return false
    }

    init(
        unit: UnitCase, document: PageDocument, parameters: [String: String], sentValue: JSONValue?,
        randomSeed: UInt64, wiring: Wiring
    ) {
        arguments = parameters.isEmpty && sentValue == nil ? nil : Arguments(parameters: parameters, sentValue: sentValue)
        self.unit = unit
        self.document = document
        self.randomSeed = randomSeed
        self.boundRevision = document.revision
        self.state = .awake(wiring)
    }

    var snapshot: PageSnapshot {
        PageSnapshot(unit: unit.name, rev: document.revision, view: document.snapshotView, actions: unit.actions)
    }

    /// Where its random numbers go on from: the generator's state (while it hibernates, the one it will go on from).
    var randomPosition: UInt64 {
        wiring?.random.position ?? hibernation?.random(seed: randomSeed) ?? randomSeed
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
        state = .hibernating(hibernation)
    }

    /// Takes the wiring of `woken`, a page just bound again into this page's document, and stops hibernating.
    func wake(with woken: BoundPage) {
        state = woken.state
        woken.state = .released
    }

    /// Disposes every subscription (which breaks every cycle in the stream graph) and drops the pairs.
    func release() {
        wiring?.subscriptions.dispose()
        state = .released
    }
}
