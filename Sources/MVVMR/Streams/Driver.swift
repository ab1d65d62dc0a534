/// A value that changes over time: it always has a current value and never fails.
///
/// Subscribing delivers the current value at once, then every change. Drivers are what a page binds
/// to paths of its JSON document. Like signals they are shared: a driver bound at two paths, or
/// subscribed twice, runs its work once per change.
///
/// ```swift
/// let label = input.showGreeting.map { "Hello \(name)" }.asDriver(startingWith: "Say hello to who?")
/// ```
public struct Driver<Element> {
    @usableFromInline let node: StreamNode<Element>

    @inlinable
    init(node: StreamNode<Element>) {
        self.node = node
    }

    /// A derived driver; `connect` must emit the current value synchronously when called.
    @inlinable
    init(connect: @escaping (StreamNode<Element>) -> Subscription) {
        node = StreamNode(replaysLatest: true, connector: connect)
    }

    /// A driver that always holds `value`.
    /// - Parameter value: the constant value.
    @inlinable
    public static func just(_ value: Element) -> Driver<Element> {
        Driver(connect: { target in
            target.emit(value)
            return .empty
        })
    }

    /// Calls `observer` with the current value now and with every change after, until the returned
    /// subscription is disposed.
    /// - Parameter observer: receives the current value and each change.
    /// - Returns: the subscription to dispose when no longer interested.
    @inlinable
    public func subscribe(_ observer: @escaping (Element) -> Void) -> Subscription {
        node.subscribe(observer)
    }

    /// The changes of this driver, without the current value it holds when subscribed.
    @inlinable
    public var changes: Signal<Element> {
        let source = node
        return Signal(connect: { target in
            var replaying = true
            let subscription = source.subscribe { value in
                if !replaying { target.emit(value) }
            }
            replaying = false
            return subscription
        })
    }
}

extension Signal {
    /// A driver that holds `initial` until this signal emits, then each emitted value.
    /// - Parameter initial: the value before the first event.
    @inlinable
    public func asDriver(startingWith initial: Element) -> Driver<Element> {
        let source = node
        return Driver(connect: { target in
            target.emit(initial)
            return source.subscribe { target.emit($0) }
        })
    }
}
