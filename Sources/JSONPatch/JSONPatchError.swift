/// An error thrown when a JSON Patch document is malformed or cannot be applied.
///
/// Applying a patch is atomic: when this error is thrown the input document is untouched
/// and no partially patched result is returned.
public struct JSONPatchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable classification of a patch failure.
    public enum Code: String, Sendable, Hashable {
        /// The patch's JSON form is malformed: not an array of objects, unknown `op`,
        /// or a missing or mistyped `path`, `from` or `value` member.
        case invalidOperation = "invalid_operation"
        /// A `path` or `from` member is not a valid JSON Pointer.
        case invalidPointer = "invalid_pointer"
        /// The location named by `path` or `from` (or its parent, for `add`) does not exist.
        case pathNotFound = "path_not_found"
        /// An array index token is malformed (leading zeros, signs, `-` where an element
        /// must exist) or out of bounds.
        case invalidArrayIndex = "invalid_array_index"
        /// A `test` operation found a different value.
        case testFailed = "test_failed"
        /// A `move` whose `from` location is a proper prefix of its `path`.
        case moveIntoDescendant = "move_into_descendant"
    }

    /// The stable classification of the failure.
    public var code: Code
    /// The zero-based position of the failing operation in the patch, when known.
    public var operationIndex: Int?
    /// A human-readable explanation.
    public var message: String

    /// Creates a patch error.
    ///
    /// - Parameters:
    ///   - code: The stable classification.
    ///   - operationIndex: The position of the failing operation, if known.
    ///   - message: A human-readable explanation.
    public init(code: Code, operationIndex: Int? = nil, message: String) {
        self.code = code
        self.operationIndex = operationIndex
        self.message = message
    }

    /// The code, the failing operation's position and the message.
    public var description: String {
        if let operationIndex {
            return "\(code.rawValue) in operation \(operationIndex): \(message)"
        }
        return "\(code.rawValue): \(message)"
    }
}
