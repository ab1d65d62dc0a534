/// A navigation that happened: the `navigation` of an action response, or a `navigate` event.
public struct Navigation: Sendable, Hashable {
    /// How the stack changed.
    public let kind: NavigationKind
    /// The unit now on top of the stack: its page's (kept once, in ``page``: every event an event log keeps is a size
    /// class smaller for it).
    public var unit: String { page.unit }
    /// The stack after the navigation.
    public let state: NavigationState
    /// The page now on top, as it is after the navigation (after the callback, for `back`).
    public let page: PageSnapshot
    /// For `back` with a callback value: the patch the callback caused on the page now on top,
    /// already emitted as its own event before this navigation.
    public var callbackPatch: PagePatch? { callbackPatchBox?.patch }
    /// ``callbackPatch``, boxed: most navigations have none, and every event (an event log holds up to 256 of them)
    /// would otherwise carry the patch's room inline.
    private let callbackPatchBox: CallbackPatchBox?

    /// A navigation.
    /// - Parameters:
    ///   - kind: how the stack changed.
    ///   - state: the stack after the navigation.
    ///   - page: the page now on top (its unit is the navigation's ``unit``).
    ///   - callbackPatch: the patch a callback value caused on the page now on top.
    public init(kind: NavigationKind, state: NavigationState, page: PageSnapshot, callbackPatch: PagePatch? = nil) {
        self.kind = kind
        self.state = state
        self.page = page
        self.callbackPatchBox = callbackPatch.map(CallbackPatchBox.init)
    }
}

/// A navigation's callback patch, held by reference; compared and hashed by its patch.
private final class CallbackPatchBox: Sendable, Hashable {
    let patch: PagePatch

    init(_ patch: PagePatch) { self.patch = patch }

    static func == (left: CallbackPatchBox, right: CallbackPatchBox) -> Bool { left.patch == right.patch }

    func hash(into hasher: inout Hasher) { hasher.combine(patch) }
}
