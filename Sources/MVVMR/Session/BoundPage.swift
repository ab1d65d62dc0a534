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
    private(set) var pairs: [BoundPair]

    init(
        unit: UnitCase, document: PageDocument, actions: ActionRegistry, subscriptions: SubscriptionBag,
        callbacks: CallbackChannel, parameters: [String: String], pairs: [BoundPair]
    ) {
        self.parameters = parameters
        self.unit = unit
        self.document = document
        self.actions = actions
        self.subscriptions = subscriptions
        self.callbacks = callbacks
        self.pairs = pairs
    }

    var snapshot: PageSnapshot {
        PageSnapshot(unit: unit.name, rev: document.revision, view: document.snapshotView, actions: unit.actions)
    }

    /// Disposes every subscription (which breaks every cycle in the stream graph) and drops the pairs.
    func release() {
        subscriptions.dispose()
        pairs = []
    }
}
