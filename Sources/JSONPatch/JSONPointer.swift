/// An RFC 6901 JSON Pointer: a path of reference tokens into a JSON document.
///
/// The empty pointer `""` is the whole document; `/a/0` is element 0 of member `a`.
/// In the text form `~` is written `~0` and `/` is written `~1`; ``tokens`` holds the
/// unescaped tokens.
///
/// ```swift
/// let pointer = try JSONPointer("/rows/3/a~1b")
/// pointer.tokens        // ["rows", "3", "a/b"]
/// pointer.description   // "/rows/3/a~1b"
/// JSONPointer.root.appending("rows").appending(3)  // /rows/3
/// ```
public struct JSONPointer: Hashable, Sendable {
    /// The unescaped reference tokens, outermost first. Empty for the root.
    public var tokens: [String]

    /// The pointer to the whole document (`""`).
    public static let root = JSONPointer(tokens: [])

    /// Creates a pointer from unescaped tokens.
    ///
    /// - Parameter tokens: The reference tokens, outermost first.
    public init(tokens: [String]) {
        self.tokens = tokens
    }

    /// Parses the RFC 6901 text form.
    ///
    /// - Parameter text: `""` or a sequence of `/`-prefixed tokens using `~0` and `~1` escapes.
    /// - Throws: ``JSONPointerError`` if the text does not start with `/` or has a bad `~` escape.
    public init(_ text: String) throws(JSONPointerError) {
        if text.isEmpty {
            tokens = []
            return
        }
        guard text.utf8.first == UInt8(ascii: "/") else {
            throw JSONPointerError(code: .missingLeadingSlash, pointer: text, message: "a non-empty JSON Pointer must start with '/'")
        }
        var result: [String] = []
        for rawToken in text.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            guard rawToken.contains(UInt8(ascii: "~")) else {
                result.append(String(decoding: rawToken, as: UTF8.self))
                continue
            }
            var unescaped: [UInt8] = []
            unescaped.reserveCapacity(rawToken.count)
            var iterator = rawToken.makeIterator()
            while let byte = iterator.next() {
                guard byte == UInt8(ascii: "~") else {
                    unescaped.append(byte)
                    continue
                }
                switch iterator.next() {
                case UInt8(ascii: "0"):
                    unescaped.append(UInt8(ascii: "~"))
                case UInt8(ascii: "1"):
                    unescaped.append(UInt8(ascii: "/"))
                default:
                    throw JSONPointerError(code: .invalidEscape, pointer: text, message: "'~' must be followed by '0' or '1'")
                }
            }
            result.append(String(decoding: unescaped, as: UTF8.self))
        }
        tokens = result
    }

    /// Whether this is the root pointer.
    public var isRoot: Bool { tokens.isEmpty }

    /// The pointer to the parent location, or `nil` for the root.
    public var parent: JSONPointer? {
        guard !tokens.isEmpty else { return nil }
        return JSONPointer(tokens: Array(tokens.dropLast()))
    }

    /// The pointer extended by one object member name.
    ///
    /// - Parameter token: The unescaped member name.
    /// - Returns: The extended pointer.
    public func appending(_ token: String) -> JSONPointer {
        var copy = self
        copy.tokens.append(token)
        return copy
    }

    /// The pointer extended by one array index.
    ///
    /// - Parameter index: The zero-based array index.
    /// - Returns: The extended pointer.
    public func appending(_ index: Int) -> JSONPointer {
        appending(index >= 0 && index < Self.indexTokens.count ? Self.indexTokens[index] : String(index))
    }

    /// The tokens of the first array indices, made once: a page's patches name the same small indices again and
    /// again, and formatting an `Int` costs more than looking its text up.
    private static let indexTokens: [String] = (0..<256).map { String($0) }

    /// Whether `self` is a proper prefix of `other` (`/a` of `/a/b`, but not of `/a` or `/ab`).
    ///
    /// - Parameter other: The longer pointer.
    /// - Returns: `true` if `other` points strictly inside the location of `self`.
    public func isProperPrefix(of other: JSONPointer) -> Bool {
        tokens.count < other.tokens.count && other.tokens.starts(with: tokens)
    }

    /// Parses an RFC 6901 array index token: `0` or digits without a leading zero, no sign.
    ///
    /// - Parameter token: The reference token.
    /// - Returns: The index, or `nil` if the token is not a valid index (this includes `-`).
    public static func arrayIndex(_ token: String) -> Int? {
        let utf8 = token.utf8
        guard let first = utf8.first, first &- UInt8(ascii: "0") < 10 else { return nil }
        if first == UInt8(ascii: "0") { return utf8.count == 1 ? 0 : nil }
        var value = 0
        for byte in utf8 {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = times10.addingReportingOverflow(Int(digit))
            if overflow1 || overflow2 { return nil }
            value = next
        }
        return value
    }
}

extension JSONPointer: CustomStringConvertible {
    /// The escaped RFC 6901 text form (`""` for the root).
    public var description: String {
        var result = ""
        for token in tokens {
            result.append("/")
            if Self.needsEscaping(token.utf8) {
                result.append(String(decoding: Self.escaped(token.utf8), as: UTF8.self))
            } else {
                result.append(token)
            }
        }
        return result
    }

    /// Whether a token holds a `~` or `/`, which its text form escapes.
    static func needsEscaping<Bytes: Sequence<UInt8>>(_ token: Bytes) -> Bool {
        token.contains { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }
    }

    /// A token's text form: `~` as `~0`, `/` as `~1`. Escaped byte by byte, not by `Character`: a '/'
    /// followed by a combining mark is one grapheme cluster, which a character-level replacement would
    /// not see as '/'.
    static func escaped<Bytes: Collection<UInt8>>(_ token: Bytes) -> [UInt8] {
        var escaped: [UInt8] = []
        escaped.reserveCapacity(token.count + 2)
        for byte in token {
            switch byte {
            case UInt8(ascii: "~"): escaped.append(contentsOf: [UInt8(ascii: "~"), UInt8(ascii: "0")])
            case UInt8(ascii: "/"): escaped.append(contentsOf: [UInt8(ascii: "~"), UInt8(ascii: "1")])
            default: escaped.append(byte)
            }
        }
        return escaped
    }
}

extension JSONPointer {
    /// Appends the pointer's text as a JSON string (quoted, escaped), the same bytes as
    /// `JSONValue.string(description).encode(into:)`, without building the text first: every patch
    /// operation written to a response or an event stream writes its paths this way.
    /// - Parameter buffer: the buffer to append UTF-8 bytes to.
    public func encodeJSONString(into buffer: inout [UInt8]) {
        writeJSONString(into: &buffer)
    }
}
