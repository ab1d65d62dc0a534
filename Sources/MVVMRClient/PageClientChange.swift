/// What changed in a ``PageClient``, as delivered by ``PageClient/changes()``.
public enum PageClientChange: Sendable, Hashable {
    /// The copy of this unit's page changed (a patch, a snapshot, a resync): read it with
    /// ``PageClient/page(_:)``.
    case pageChanged(String)
    /// The page of this unit was released (popped, or replaced by a `root` navigation) and dropped.
    case pageRemoved(String)
    /// The navigation moved; the page now on top changed too (a `pageChanged` follows).
    case navigated(PageNavigationChange)
    /// A session was opened (its id).
    case sessionOpened(String)
    /// The server lost the session (restart, expiry): the client opened a new one (its id) at the page it
    /// was on. Pages other than that one were dropped; an action in flight failed with
    /// ``PageClientError/sessionRecovered(_:)``.
    case sessionRecovered(String)
    /// The event stream is connected.
    case eventsConnected
    /// The event stream dropped; the client reconnects by itself (until ``PageClient/stopEvents()``).
    case eventsDisconnected
}
