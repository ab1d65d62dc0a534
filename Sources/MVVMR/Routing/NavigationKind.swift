/// How the navigation stack changed: the `type` of a navigation in the protocol.
public enum NavigationKind: String, Sendable, Hashable {
    /// A fresh page went on top of the stack.
    case push
    /// A fresh page went on top of the stack, presented (modal).
    case present
    /// Every page was released and a fresh page is the only one on the stack.
    case root
    /// The top page was popped; it is kept, state intact, in the session's forward list (see
    /// ``NavigationState/forward``).
    case back
    /// The nearest page of the forward list went back on top of the stack (pushed again, or presented
    /// again if it was presented), with the state it had when it was popped.
    case forward
}
