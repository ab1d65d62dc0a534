import JSONPatch

/// What one action did: the body of an action response.
public struct ActionResult: Sendable {
    /// The unit the action was for.
    public let unit: String
    /// The page's revision after the action.
    public let rev: Int
    /// The sequence number of the session's latest event when the result was built.
    public let sequence: Int
    /// The patch from the client's revision (or the revision before the action) to `rev`; empty when
    /// nothing changed; nil when the patches needed are no longer kept (then `snapshot` is set).
    public let patch: JSONPatch?
    /// The whole page, when `patch` is nil and the page is still live.
    public let snapshot: PageSnapshot?
    /// The last navigation the action caused, if any.
    public let navigation: Navigation?
    /// Why a navigation the action asked for failed (its target's ViewModel threw), if one did.
    public let navigationFailure: PageError?
    /// Every event the action caused, in order.
    public let events: [SessionEvent]
    /// The number of the input record the action made in the session's log.
    public var inputNumber: Int? = nil
}
