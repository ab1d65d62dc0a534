/// The `Decoder` behind ``JSONValueDecoder``: a view of one ``JSONValue`` at one coding path.
///
/// A value, so decoding allocates no decoder objects of its own; it is also its own single value
/// container. The containers throw the standard `DecodingError`s, which ``JSONValueDecoder`` translates.
struct JSONTreeDecoder: Decoder, SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let object = try Self.object(value, at: codingPath)
        return KeyedDecodingContainer(
            JSONTreeKeyedDecodingContainer<Key>(object: object, codingPath: codingPath, userInfo: userInfo))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let elements = try Self.array(value, at: codingPath)
        return JSONTreeUnkeyedDecodingContainer(elements: elements, codingPath: codingPath, userInfo: userInfo)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        self
    }

    // MARK: Single value container

    func decodeNil() -> Bool {
        value.isNull
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        try Self.bool(value, at: codingPath)
    }

    func decode(_ type: String.Type) throws -> String {
        try Self.string(value, at: codingPath)
    }

    func decode(_ type: Double.Type) throws -> Double {
        try Self.double(value, at: codingPath)
    }

    func decode(_ type: Float.Type) throws -> Float {
        try Self.float(value, at: codingPath)
    }

    func decode(_ type: Int.Type) throws -> Int {
        try Self.integer(type, from: value, at: codingPath)
    }

    func decode(_ type: Int8.Type) throws -> Int8 {
        try Self.integer(type, from: value, at: codingPath)
    }

    func decode(_ type: Int16.Type) throws -> Int16 {
        try Self.integer(type, from: value, at: codingPath)
    }

    func decode(_ type: Int32.Type) throws -> Int32 {
        try Self.integer(type, from: value, at: codingPath)
    }

    func decode(_ type: Int64.Type) throws -> Int64 {
        try Self.integer(type, from: value, at: codingPath)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type) throws -> Int128 {
        try Self.integer(type, from: value, at: codingPath)
    }

    func decode(_ type: UInt.Type) throws -> UInt {
        try Self.integer(type, from: value, at: codingPath)
    }

    func decode(_ type: UInt8.Type) throws -> UInt8 {
        try Self.integer(type, from: value, at: codingPath)
    }

    func decode(_ type: UInt16.Type) throws -> UInt16 {
        try Self.integer(type, from: value, at: codingPath)
    }

    func decode(_ type: UInt32.Type) throws -> UInt32 {
        try Self.integer(type, from: value, at: codingPath)
    }

    func decode(_ type: UInt64.Type) throws -> UInt64 {
        try Self.integer(type, from: value, at: codingPath)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type) throws -> UInt128 {
        try Self.integer(type, from: value, at: codingPath)
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try Self.decode(type, from: value, at: codingPath, userInfo: userInfo)
    }
}

// MARK: - Values

extension JSONTreeDecoder {
    /// Decodes `type` from `value`, found at `codingPath`.
    ///
    /// ``JSONValue`` and ``JSONObject`` pass through unchanged; strings, `Int`s, `Double`s and Booleans are
    /// read directly; any other type decodes itself from a decoder of its own.
    static func decode<T: Decodable>(
        _ type: T.Type, from value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey],
        userInfo: [CodingUserInfoKey: Any]
    ) throws -> T {
        // Comparing the types first makes each check a pointer comparison (or nothing, once specialized)
        // instead of a dynamic cast.
        if T.self == JSONValue.self, let same = value as? T { return same }
        if T.self == String.self, let string = try Self.string(value, at: codingPath()) as? T { return string }
        if T.self == Int.self, let integer = try Self.integer(Int.self, from: value, at: codingPath()) as? T {
            return integer
        }
        if T.self == Bool.self, let bool = try Self.bool(value, at: codingPath()) as? T { return bool }
        if T.self == Double.self, let number = try Self.double(value, at: codingPath()) as? T { return number }
        if T.self == JSONObject.self, let object = try Self.object(value, at: codingPath()) as? T { return object }
        return try T(from: JSONTreeDecoder(value: value, codingPath: codingPath(), userInfo: userInfo))
    }

    static func bool(_ value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey]) throws -> Bool {
        guard case .bool(let bool) = value else {
            throw mismatch(Bool.self, expected: "a Boolean", value, at: codingPath())
        }
        return bool
    }

    static func string(_ value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey]) throws -> String {
        guard case .string(let string) = value else {
            throw mismatch(String.self, expected: "a string", value, at: codingPath())
        }
        return string
    }

    static func object(_ value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey]) throws -> JSONObject {
        guard case .object(let object) = value else {
            throw mismatch([String: Any].self, expected: "an object", value, at: codingPath())
        }
        return object
    }

    static func array(_ value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey]) throws -> [JSONValue] {
        guard case .array(let elements) = value else {
            throw mismatch([Any].self, expected: "an array", value, at: codingPath())
        }
        return elements
    }

    /// The number as a `Double` (an ``JSONValue/int(_:)`` converts, rounding beyond 2^53 as any conversion does).
    static func double(_ value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey]) throws -> Double {
        switch value {
        case .double(let number): return number
        case .int(let integer): return Double(integer)
        default: throw mismatch(Double.self, expected: "a number", value, at: codingPath())
        }
    }

    /// The number as the nearest `Float`.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for a finite number beyond `Float`'s range.
    static func float(_ value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey]) throws -> Float {
        let number: Double
        switch value {
        case .double(let floating): number = floating
        case .int(let integer): number = Double(integer)
        default: throw mismatch(Float.self, expected: "a number", value, at: codingPath())
        }
        let converted = Float(number)
        guard converted.isFinite || !number.isFinite else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: codingPath(), debugDescription: "number \(number) does not fit in Float"))
        }
        return converted
    }

    /// The number as an `Integer`, if it is whole and in range.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for a fraction or a number out of the type's range.
    static func integer<Integer: FixedWidthInteger>(
        _ type: Integer.Type, from value: JSONValue, at codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> Integer {
        switch value {
        case .int(let integer):
            if let exact = Integer(exactly: integer) { return exact }
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: codingPath(), debugDescription: "number \(integer) does not fit in \(Integer.self)"))
        case .double(let number):
            if let exact = exactInteger(number, as: Integer.self) { return exact }
            // Below 2^63 in magnitude, a double that is not an exact Int has a fraction (NaN fails the comparison).
            let hasFraction = JSONValue.exactInteger(number) == nil && number.magnitude < 9_223_372_036_854_775_808.0
            let problem = hasFraction ? "is not a whole number" : "does not fit in \(Integer.self)"
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: codingPath(), debugDescription: "number \(number) \(problem)"))
        default:
            throw mismatch(Integer.self, expected: "a number", value, at: codingPath())
        }
    }

    /// A whole `Double` converted exactly, if `Integer` holds it (up to 2^64, beyond which no supported
    /// value encodes as a number).
    ///
    /// Written with truncating conversions instead of `init(exactly:)` from a floating-point value,
    /// whose rounding calls would make this dependency-free module need libm at link time.
    private static func exactInteger<Integer: FixedWidthInteger>(_ number: Double, as type: Integer.Type) -> Integer? {
        if let integer = JSONValue.exactInteger(number) { return Integer(exactly: integer) }
        // Every double from 2^63 on is whole: its spacing is at least 2048.
        if number >= 9_223_372_036_854_775_808.0 && number < 18_446_744_073_709_551_616.0 {
            return Integer(exactly: UInt64(number))
        }
        return nil
    }

    /// The error for a value of the wrong kind: `valueNotFound` for `null`, `typeMismatch` otherwise.
    static func mismatch(
        _ type: Any.Type, expected: String, _ value: JSONValue, at codingPath: [any CodingKey]
    ) -> DecodingError {
        if value.isNull {
            return DecodingError.valueNotFound(
                type,
                DecodingError.Context(codingPath: codingPath, debugDescription: "expected \(expected), found null"))
        }
        return DecodingError.typeMismatch(
            type,
            DecodingError.Context(
                codingPath: codingPath, debugDescription: "expected \(expected), found \(value.kindName)"))
    }
}

extension JSONValue {
    /// The kind of the value with its article, for error messages.
    fileprivate var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a Boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
