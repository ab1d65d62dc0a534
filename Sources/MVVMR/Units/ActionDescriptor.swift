/// One action a unit accepts: its name and the type of its value.
public struct ActionDescriptor: Sendable, Hashable {
    /// The action's name, as POSTed by clients; a part's actions are named `part.action`.
    public let name: String
    /// The type of the action's value.
    public let valueType: ActionValueType

    /// Describes one action.
    /// - Parameters:
    ///   - name: the action's name.
    ///   - valueType: the type of its value.
    public init(name: String, valueType: ActionValueType) {
        self.name = name
        self.valueType = valueType
    }
}
