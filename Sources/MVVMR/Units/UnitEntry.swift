/// How a unit's page may be reached: the rule a server enforces on deep links.
///
/// A deep link is a client asking for a page by name, outside of any page's flow: a session started at the
/// unit (`POST /api/sessions {"unit": …}`), a page read that would bind it (`GET /api/pages/{unit}`), or a
/// client `open` that would push it. A page's own navigation (a route from an action or a callback:
/// push, present, root) is never a deep link, and neither is returning to a page the session holds
/// (`back`, `forward`, an `open` that pops back to it on the stack).
///
/// ```swift
/// extension UnitCase {
///     // Reachable only by signing in on the login page, which pushes it with the user.
///     static let main = UnitCase("main", view: MainView.self, viewModel: MainViewModel.self, entry: .flowOnly)
/// }
/// ```
public enum UnitEntry: String, Sendable, Hashable, CaseIterable {
    /// Any client may open the unit by name (the default).
    case deepLink = "deep_link"
    /// Only a page's own navigation reaches the unit, or returning to it; a deep link is refused
    /// (`entry_refused`).
    case flowOnly = "flow_only"

    /// Whether a deep link may bind a fresh page of the unit.
    public var admitsDeepLinks: Bool { self == .deepLink }
}
