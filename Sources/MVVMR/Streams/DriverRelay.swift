/// A mutable current value that code sets and pages observe (RxRelay's BehaviorRelay).
///
/// ```swift
/// let count = DriverRelay(0)
/// count.accept(count.value + 1)
/// ```
public final class DriverRelay<Element> {
    private let node: StreamNode<Element>
    /// The current value.
    public private(set) var value: Element

    /// A relay holding `initial`.
    /// - Parameter initial: the first current value.
    public init(_ initial: Element) {
        value = initial
        node = StreamNode(sourceReplaying: initial)
    }

    /// The current value and its changes.
    public var driver: Driver<Element> { Driver(node: node) }

    /// Makes `newValue` current and emits it to every observer, synchronously.
    /// - Parameter newValue: the new current value.
    public func accept(_ newValue: Element) {
        value = newValue
        node.emit(newValue)
    }
}
