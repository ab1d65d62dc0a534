import JSONPatch

/// A Swift value that a page can write into its JSON document.
///
/// ```swift
/// struct Employee: JSONRepresentable {
///     let id: Int, name: String
///     var jsonValue: JSONValue { ["id": .int(id), "name": .string(name)] }
/// }
/// ```
public protocol JSONRepresentable {
    /// The value as JSON.
    var jsonValue: JSONValue { get }
}

extension JSONValue: JSONRepresentable {
    /// Itself.
    public var jsonValue: JSONValue { self }
}

extension JSONObject: JSONRepresentable {
    /// The object as a JSON value.
    public var jsonValue: JSONValue { .object(self) }
}

extension String: JSONRepresentable {
    /// A JSON string.
    public var jsonValue: JSONValue { .string(self) }
}

extension Int: JSONRepresentable {
    /// A JSON integer.
    public var jsonValue: JSONValue { .int(self) }
}

extension Double: JSONRepresentable {
    /// A JSON number.
    public var jsonValue: JSONValue { .double(self) }
}

extension Bool: JSONRepresentable {
    /// A JSON bool.
    public var jsonValue: JSONValue { .bool(self) }
}

extension Optional: JSONRepresentable where Wrapped: JSONRepresentable {
    /// The wrapped value, or `null`.
    public var jsonValue: JSONValue { self?.jsonValue ?? .null }
}

extension Array: JSONRepresentable where Element: JSONRepresentable {
    /// A JSON array of the elements.
    public var jsonValue: JSONValue { .array(map { $0.jsonValue }) }  // a closure, not a key path: no run-time projection
}

extension Dictionary: JSONRepresentable where Key == String, Value: JSONRepresentable {
    /// A JSON object with the keys sorted, so the document does not depend on hashing order.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        for key in keys.sorted() {
            if let value = self[key] { object[key] = value.jsonValue }
        }
        return .object(object)
    }
}
