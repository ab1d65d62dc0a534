import JSONPatch

/// One action a unit accepts: its name and the type of its value.
public struct ActionDescriptor: Sendable, Hashable {
    /// The action's name, as POSTed by clients; a part's actions are named `part.action`.
    public let name: String
    /// The type of the action's value.
    public let valueType: ActionValueType
    /// The JSON Schema of the action's value, for an action whose value is a `Decodable` type; nil when
    /// `valueType` says it all.
    public let schema: JSONValue?

    /// Describes one action.
    /// - Parameters:
    ///   - name: the action's name.
    ///   - valueType: the type of its value.
    ///   - schema: the JSON Schema of its value, when `valueType` does not say it all.
    public init(name: String, valueType: ActionValueType, schema: JSONValue? = nil) {
        self.name = name
        self.valueType = valueType
        self.schema = schema
    }

    /// The JSON Schema of the action's value: ``schema``, or the one `valueType` implies.
    public var valueSchema: JSONValue {
        if let schema { return schema }
        switch valueType {
        case .none: return ["type": "null"]
        case .string: return ["type": "string"]
        case .int: return ["type": "integer"]
        case .number: return ["type": "number"]
        case .bool: return ["type": "boolean"]
        case .object: return ["type": "object"]
        case .array: return ["type": "array"]
        case .any: return [:]
        }
    }
}
