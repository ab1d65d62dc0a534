/// How the navigation stack changed: the `type` of a navigation in the protocol.
public enum NavigationKind: String, Sendable, Hashable {
    /// A fresh page went on top of the stack.
    case push
    /// A fresh page went on top of the stack, presented (modal).
    case present
    /// Every page was released and a fresh page is the only one on the stack.
    case root
    /// The top page was popped and released.
    case back
}
