/// A stream of events: button taps, submitted text, results of async work.
///
/// A signal has no current value and never fails. Signals are hot and shared: however many
/// observers subscribe, each upstream event runs the operator chain once. Operators (`map`,
/// `filter`, `merge`, `flatMapLatest`, `debounce`, …) return new signals; nothing runs until
/// something subscribes, usually a page binding.
///
/// ```swift
/// let greeting = input.showGreeting.map { "Hello \(person.name)" }
/// ```
public struct Signal<Element> {
    @usableFromInline let node: StreamNode<Element>

    @inlinable
    init(node: StreamNode<Element>) {
        self.node = node
    }

    /// A derived signal whose `connect` closure subscribes upstream and emits into the target.
    @inlinable
    init(connect: @escaping (StreamNode<Element>) -> Subscription) {
        node = StreamNode(replaysLatest: false, connector: connect)
    }

    /// Calls `observer` for every later event until the returned subscription is disposed.
    /// - Parameter observer: receives each event.
    /// - Returns: the subscription to dispose when no longer interested.
    @inlinable
    public func subscribe(_ observer: @escaping (Element) -> Void) -> Subscription {
        node.subscribe(observer)
    }

    /// A signal that never emits.
    public static var never: Signal<Element> { Signal(connect: { _ in .empty }) }

    /// A signal that emits `values`, in order, when it is first subscribed.
    /// - Parameter values: the events to emit.
    @inlinable
    public static func just(_ values: Element...) -> Signal<Element> {
        Signal(connect: { target in
            for value in values { target.emit(value) }
            return .empty
        })
    }
}
