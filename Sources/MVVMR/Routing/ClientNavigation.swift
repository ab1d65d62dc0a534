/// A navigation the client asks for (`POST /api/navigation`), as opposed to one a ViewModel routes.
public enum ClientNavigation: Sendable, Hashable {
    /// Pops the top page, without a callback value; the page goes to the front of the forward list.
    /// Does nothing when only one page is on the stack.
    case back
    /// Puts the nearest page of the forward list back on top of the stack, its state as it was. Refused
    /// with `nothing_forward` when the forward list is empty.
    case forward
    /// Pops back to `unit` if it is on the stack (the pages popped go to the forward list); goes forward
    /// when `unit` is the nearest page of the forward list; else pushes a fresh page of it (browser back
    /// buttons, deep links), which clears the forward list, and which a unit that is
    /// ``UnitEntry/flowOnly`` refuses with `entry_refused`. Does nothing when it is already on top.
    case open(String, parameters: [String: String] = [:])
}
