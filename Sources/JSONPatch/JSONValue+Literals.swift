extension JSONValue: ExpressibleByNilLiteral {
    /// Creates ``null`` from `nil`.
    ///
    /// - Parameter nilLiteral: The `nil` literal.
    public init(nilLiteral: ()) {
        self = .null
    }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// Creates ``bool(_:)`` from `true` or `false`.
    ///
    /// - Parameter value: The literal.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// Creates ``int(_:)`` from an integer literal.
    ///
    /// - Parameter value: The literal.
    public init(integerLiteral value: Int) {
        self = .int(value)
    }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// Creates ``double(_:)`` from a floating-point literal.
    ///
    /// - Parameter value: The literal.
    public init(floatLiteral value: Double) {
        self = .double(value)
    }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// Creates ``string(_:)`` from a string literal.
    ///
    /// - Parameter value: The literal.
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// Creates ``array(_:)`` from an array literal.
    ///
    /// - Parameter elements: The elements, in order.
    public init(arrayLiteral elements: JSONValue...) {
        self = .array(elements)
    }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// Creates ``object(_:)`` from a dictionary literal, keeping the written key order.
    ///
    /// A key written twice keeps its first position and its last value.
    ///
    /// - Parameter elements: The members, in order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements))
    }
}

/// Lets interpolated string literals such as `"Row \(index)"` stand for ``JSONValue/string(_:)``.
extension JSONValue: ExpressibleByStringInterpolation {}
