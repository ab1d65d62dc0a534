/// What a client-initiated navigation or a session start did.
public struct NavigationResult: Sendable {
    /// The navigation, or nil when nothing changed (back on a single page, open of the top unit).
    public let navigation: Navigation?
    /// The stack now.
    public let state: NavigationState
    /// The sequence number of the session's latest event when the result was built.
    public let sequence: Int
    /// Every event the navigation caused, in order.
    public let events: [SessionEvent]
    /// The number of the input record the navigation made in the session's log (nil when it made none).
    public var inputNumber: Int? = nil
}
