extension JSONValue {
    /// The string, if this is ``string(_:)``.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is ``int(_:)`` or a ``double(_:)`` holding a whole number strictly between
    /// −2^63 and 2^63.
    ///
    /// The double −2^63 is refused although `Int.min` equals it: it is what every integer text from about
    /// −2^63 − 1024 to −2^63 parses to, so `-9223372036854775809` would otherwise read as `Int.min` while
    /// `9223372036854775808` (which parses to 2^63) is refused. `Int.min` written as an integer is ``int(_:)``.
    public var intValue: Int? {
        switch self {
        case .int(let value): return value
        case .double(let value) where value > -9_223_372_036_854_775_808.0: return JSONValue.exactInteger(value)
        default: return nil
        }
    }

    /// The number as a `Double`, for ``double(_:)`` and ``int(_:)`` alike.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The Boolean, if this is ``bool(_:)``.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, if this is ``array(_:)``.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object, if this is ``object(_:)``.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The member named `key`, if this is an object that has it.
    ///
    /// - Parameter key: The member name.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The element at `index`, if this is an array and the index is in bounds.
    ///
    /// - Parameter index: The zero-based position.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }
}
