extension JSONValue {
    /// The nesting limit used when none is given: deep enough for any real view-model,
    /// shallow enough that recursive consumers of the value cannot exhaust a thread stack.
    public static let defaultMaxDepth = 512

    /// Parses UTF-8 JSON text (RFC 8259).
    ///
    /// The parser is iterative, so hostile input such as a million `[` fails cleanly with
    /// ``JSONParseError/Code/nestingTooDeep`` instead of overflowing the stack.
    /// Integers that fit in `Int` become ``int(_:)``; other numbers become ``double(_:)``
    /// (a number too large for a finite `Double` is rejected). Duplicate object keys keep the
    /// first key's position and the last value.
    ///
    /// ```swift
    /// let value = try JSONValue(parsing: Array(#"{"a":[1,2.5,"x"]}"#.utf8))
    /// ```
    ///
    /// - Parameters:
    ///   - bytes: The UTF-8 encoded text. A byte-order mark is not accepted.
    ///   - maxDepth: The maximum number of nested arrays and objects.
    /// - Throws: ``JSONParseError`` with the byte offset of the first problem.
    public init(parsing bytes: some Collection<UInt8>, maxDepth: Int = JSONValue.defaultMaxDepth) throws(JSONParseError) {
        let result: Result<JSONValue, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Self.parse(buffer, maxDepth: maxDepth)
        }
        if let result {
            self = try result.get()
        } else {
            let copy = Array(bytes)
            self = try copy.withUnsafeBufferPointer { buffer in Self.parse(buffer, maxDepth: maxDepth) }.get()
        }
    }

    /// Parses UTF-8 JSON text held in an array: the same as the generic form, without its run-time
    /// generic dispatch (a server parses a request body this way on every action).
    ///
    /// - Parameters:
    ///   - bytes: The UTF-8 encoded text.
    ///   - maxDepth: The maximum number of nested arrays and objects.
    /// - Throws: ``JSONParseError`` with the byte offset of the first problem.
    public init(parsing bytes: [UInt8], maxDepth: Int = JSONValue.defaultMaxDepth) throws(JSONParseError) {
        self = try bytes.withUnsafeBufferPointer { buffer in Self.parse(buffer, maxDepth: maxDepth) }.get()
    }

    /// Parses JSON text.
    ///
    /// - Parameters:
    ///   - text: The JSON text.
    ///   - maxDepth: The maximum number of nested arrays and objects.
    /// - Throws: ``JSONParseError`` with the byte offset (in the UTF-8 form of `text`) of the first problem.
    public init(parsing text: String, maxDepth: Int = JSONValue.defaultMaxDepth) throws(JSONParseError) {
        var text = text
        // withUTF8 makes the string contiguous (a no-op for native strings) so no copy is needed.
        self = try text.withUTF8 { buffer in Self.parse(buffer, maxDepth: maxDepth) }.get()
    }

    /// Reads UTF-8 JSON text that is one object whose member values are all scalars (strings, numbers, literals),
    /// handing each member to `member` in document order, without building the object or a `String` of each key:
    /// the cheap way to read a small request body of known members (``isKey(_:_:)`` compares a key). A duplicate
    /// key is handed over twice (the later value is the one `JSONValue(parsing:maxDepth:)` keeps).
    ///
    /// - Parameters:
    ///   - bytes: The UTF-8 encoded text.
    ///   - member: Called with each member's key, its UTF-8 bytes unescaped (valid only during the call), and its
    ///     value, in order.
    /// - Returns: `true` when the whole text was such an object. `false` for any other text, valid or not (an
    ///   empty object, a member holding an array or an object, malformed text): the members handed over by then
    ///   are to be discarded, and the text parsed with `JSONValue(parsing:maxDepth:)`, which reports any
    ///   error.
    public static func readScalarMembers(
        of bytes: [UInt8], _ member: (_ key: UnsafeBufferPointer<UInt8>, _ value: JSONValue) -> Void
    ) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(bytes: buffer, maxDepth: 1)
            return parser.parseScalarMembers(member)
        }
    }

    /// Whether a key that ``readScalarMembers(of:_:)`` handed over is `name`, byte for byte.
    /// - Parameters:
    ///   - key: the key's UTF-8 bytes.
    ///   - name: the name looked for.
    @inlinable
    public static func isKey(_ key: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        // Through `withUTF8Buffer`: a one-letter name may be held as a scalar, which has no `utf8Start`.
        name.withUTF8Buffer { expected in
            guard key.count == expected.count else { return false }
            for index in 0..<key.count where key[index] != expected[index] { return false }
            return true
        }
    }

    private static func parse(_ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> Result<JSONValue, JSONParseError> {
        var parser = JSONParser(bytes: buffer, maxDepth: maxDepth)
        do {
            return .success(try parser.parseDocument())
        } catch {
            return .failure(error)
        }
    }
}
