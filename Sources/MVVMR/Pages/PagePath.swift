import JSONPatch

/// A JSON Pointer written as a string literal where a View binds an output: `"/greeting"`.
///
/// An invalid literal does not trap: the binding that uses it fails the page's binding with a
/// `binding_failed` error.
public struct PagePath: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The parsed pointer, or nil when the text is not a JSON Pointer.
    public let pointer: JSONPointer?
    /// The text as written.
    public let text: String

    /// Parses `value` as a JSON Pointer.
    /// - Parameter value: pointer text such as `/items` or `/user/name`.
    public init(stringLiteral value: String) {
        text = value
        pointer = try? JSONPointer(value)
    }

    /// A path from an already parsed pointer.
    /// - Parameter pointer: the pointer.
    public init(_ pointer: JSONPointer) {
        self.pointer = pointer
        text = pointer.description
    }

    /// The text as written.
    public var description: String { text }
}
