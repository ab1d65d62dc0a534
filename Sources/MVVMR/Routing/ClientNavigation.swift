/// A navigation the client asks for (`POST /api/navigation`), as opposed to one a ViewModel routes.
public enum ClientNavigation: Sendable, Hashable {
    /// Pops the top page, without a callback value. Does nothing when only one page is on the stack.
    case back
    /// Pops back to `unit` if it is on the stack, else pushes a fresh page of it (browser back
    /// buttons, deep links). Does nothing when it is already on top.
    case open(String, parameters: [String: String] = [:])
}
