/// Owns subscriptions and disposes all of them at once.
///
/// Unlike RxSwift's `DisposeBag`, dropping a bag does not dispose its contents implicitly:
/// call `dispose()` (pages do it when they are released), so teardown happens at a known point.
public final class SubscriptionBag {
    private var subscriptions: [Subscription] = []

    /// An empty bag.
    public init() {}

    /// The number of subscriptions held.
    public var count: Int { subscriptions.count }

    /// Keeps `subscription` until `dispose()`.
    /// - Parameter subscription: the subscription to own.
    public func insert(_ subscription: Subscription) {
        subscriptions.append(subscription)
    }

    /// Disposes every subscription held, in the order they were inserted, and empties the bag.
    public func dispose() {
        let held = subscriptions
        subscriptions = []
        for subscription in held { subscription.dispose() }
    }
}
