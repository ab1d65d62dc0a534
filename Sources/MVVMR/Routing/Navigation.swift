/// A navigation that happened: the `navigation` of an action response, or a `navigate` event.
public struct Navigation: Sendable, Hashable {
    /// How the stack changed.
    public let kind: NavigationKind
    /// The unit now on top of the stack.
    public let unit: String
    /// The stack after the navigation.
    public let state: NavigationState
    /// The page now on top, as it is after the navigation (after the callback, for `back`).
    public let page: PageSnapshot
    /// For `back` with a callback value: the patch the callback caused on the page now on top,
    /// already emitted as its own event before this navigation.
    public let callbackPatch: PagePatch?

    /// A navigation.
    /// - Parameters:
    ///   - kind: how the stack changed.
    ///   - unit: the unit now on top.
    ///   - state: the stack after the navigation.
    ///   - page: the page now on top.
    ///   - callbackPatch: the patch a callback value caused on the page now on top.
    public init(kind: NavigationKind, unit: String, state: NavigationState, page: PageSnapshot,
                callbackPatch: PagePatch? = nil) {
        self.kind = kind
        self.unit = unit
        self.state = state
        self.page = page
        self.callbackPatch = callbackPatch
    }
}
