/// A signal that code pushes events into: state a ViewModel emits itself (RxRelay's PublishRelay).
///
/// ```swift
/// let refresh = Relay<Void>()
/// refresh.accept(())
/// ```
public final class Relay<Element> {
    @usableFromInline let node = StreamNode<Element>(sourceReplaying: nil)

    /// A relay with no observers yet.
    public init() {}

    /// The events accepted from now on.
    @inlinable
    public var signal: Signal<Element> { Signal(node: node) }

    /// Emits `value` to every current observer, synchronously.
    /// - Parameter value: the event.
    @inlinable
    public func accept(_ value: Element) {
        node.emit(value)
    }
}
