import JSONPatch

/// The JSON type of an action's value, as listed by `GET /api/units` and OpenAPI.
public enum ActionValueType: String, Sendable, Hashable, CaseIterable {
    /// No value: the request's `value` is absent or `null`.
    case none
    /// A JSON string.
    case string
    /// A JSON number without a fraction.
    case int
    /// Any JSON number.
    case number
    /// `true` or `false`.
    case bool
    /// A JSON object.
    case object
    /// A JSON array.
    case array
    /// Any JSON value (`null` included): the value of a `Decodable` type whose schema cannot be derived
    /// (``JSONSchema`` says `{}`), which decoding alone checks.
    case any

    /// Whether `value` has this type; an `int` accepts a number with a zero fraction.
    /// - Parameter value: the action's value from the request.
    public func accepts(_ value: JSONValue) -> Bool {
        switch (self, value) {
        case (.any, _), (.none, .null), (.string, .string), (.bool, .bool), (.object, .object), (.array, .array),
            (.int, .int), (.number, .int), (.number, .double):
            return true
        case (.int, .double):
            return value.intValue != nil
        default:
            return false
        }
    }
}
