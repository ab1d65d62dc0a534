import JSONPatch

/// A whole page: what `GET /api/pages/{unit}` returns and what a navigation carries.
public struct PageSnapshot: Sendable, Hashable {
    /// The unit's name.
    public let unit: String
    /// The page's revision.
    public let rev: Int
    /// The page's JSON document.
    public let view: JSONValue
    /// The actions the page accepts.
    public let actions: [ActionDescriptor]

    /// A snapshot.
    /// - Parameters:
    ///   - unit: the unit's name.
    ///   - rev: the page's revision.
    ///   - view: the page's document.
    ///   - actions: the actions it accepts.
    public init(unit: String, rev: Int, view: JSONValue, actions: [ActionDescriptor]) {
        self.unit = unit
        self.rev = rev
        self.view = view
        self.actions = actions
    }
}
