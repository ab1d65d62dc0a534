/// Why an ``HTTPServer`` could not start.
public struct HTTPServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable code: `invalid_host`, `start_failed` or `already_started`.
    public var code: String
    /// A sentence for people.
    public var message: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: the stable code.
    ///   - message: the human message.
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
