/// A handle that stops one subscription (or one scheduled piece of work) when disposed.
///
/// Disposing is idempotent. A page keeps the subscriptions its bindings made and disposes them
/// when the page is released, which breaks every reference from a source back to its observers:
/// that is how a released page frees its whole stream graph.
///
/// ```swift
/// let subscription = driver.subscribe { print($0) }
/// subscription.dispose()
/// ```
public final class Subscription {
    private var teardown: (() -> Void)?

    /// Creates a subscription that runs `teardown` once, on the first `dispose()`.
    /// - Parameter teardown: what stops the work; released right after it ran.
    public init(_ teardown: @escaping () -> Void) {
        self.teardown = teardown
    }

    /// A subscription with nothing to stop.
    public static var empty: Subscription { Subscription(nil) }

    private init(_ teardown: (() -> Void)?) {
        self.teardown = teardown
    }

    /// Whether `dispose()` has run.
    public var isDisposed: Bool { teardown == nil }

    /// Stops the work; later calls do nothing.
    public func dispose() {
        // Take the closure out first so a teardown that disposes this subscription again is harmless.
        guard let teardown else { return }
        self.teardown = nil
        teardown()
    }

    /// Adds this subscription to `bag`, which disposes it when the bag is disposed.
    /// - Parameter bag: the bag that owns this subscription from now on.
    @inlinable
    public func disposed(by bag: SubscriptionBag) {
        bag.insert(self)
    }
}
