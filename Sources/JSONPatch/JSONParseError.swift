/// An error thrown when JSON text cannot be parsed.
///
/// The ``code`` is stable and meant for programs; the ``message`` is for people.
/// ``offset`` is the byte offset into the input at which the problem was found.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable classification of a parse failure.
    public enum Code: String, Sendable, Hashable {
        /// The input ended before the value was complete (this includes empty input).
        case unexpectedEnd = "unexpected_end"
        /// A byte that cannot start or continue a value at this position.
        case unexpectedCharacter = "unexpected_character"
        /// A number that does not follow the JSON number grammar.
        case invalidNumber = "invalid_number"
        /// A number whose magnitude is too large to be represented as a finite `Double`.
        case numberOutOfRange = "number_out_of_range"
        /// A backslash escape that JSON does not define, or a malformed `\u` escape.
        case invalidEscape = "invalid_escape"
        /// A `\u` escape encoding an unpaired UTF-16 surrogate.
        case invalidSurrogate = "invalid_surrogate"
        /// Bytes inside a string that are not well-formed UTF-8.
        case invalidUTF8 = "invalid_utf8"
        /// An unescaped control character (below U+0020) inside a string.
        case controlCharacter = "control_character"
        /// Arrays and objects nested deeper than the parser's `maxDepth`.
        case nestingTooDeep = "nesting_too_deep"
        /// Non-whitespace bytes after the end of the top-level value.
        case trailingData = "trailing_data"
    }

    /// The stable classification of the failure.
    public var code: Code
    /// The byte offset in the input where the failure was detected.
    public var offset: Int
    /// A human-readable explanation.
    public var message: String

    /// Creates a parse error.
    ///
    /// - Parameters:
    ///   - code: The stable classification.
    ///   - offset: The byte offset of the problem.
    ///   - message: A human-readable explanation.
    public init(code: Code, offset: Int, message: String) {
        self.code = code
        self.offset = offset
        self.message = message
    }

    /// The message with its code and offset, e.g. `invalid_escape at byte 12: unknown escape \q`.
    public var description: String {
        "\(code.rawValue) at byte \(offset): \(message)"
    }
}
