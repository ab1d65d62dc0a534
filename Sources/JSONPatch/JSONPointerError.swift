/// An error thrown when text is not a valid RFC 6901 JSON Pointer.
public struct JSONPointerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable classification of a pointer syntax failure.
    public enum Code: String, Sendable, Hashable {
        /// A non-empty pointer that does not start with `/`.
        case missingLeadingSlash = "missing_leading_slash"
        /// A `~` that is not followed by `0` or `1`.
        case invalidEscape = "invalid_escape"
    }

    /// The stable classification of the failure.
    public var code: Code
    /// The text that was rejected.
    public var pointer: String
    /// A human-readable explanation.
    public var message: String

    /// Creates a pointer error.
    ///
    /// - Parameters:
    ///   - code: The stable classification.
    ///   - pointer: The rejected text.
    ///   - message: A human-readable explanation.
    public init(code: Code, pointer: String, message: String) {
        self.code = code
        self.pointer = pointer
        self.message = message
    }

    /// The code, the rejected pointer and the message.
    public var description: String {
        "\(code.rawValue): \(message) (pointer \"\(pointer)\")"
    }
}
