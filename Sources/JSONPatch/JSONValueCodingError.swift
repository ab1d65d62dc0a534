/// An error thrown when a Swift value cannot be encoded into a ``JSONValue`` or decoded from one.
///
/// ``codingPath`` says where: a JSON Pointer into the value (`/items/2/name`, or `""` for the whole
/// value). For a missing member it points at the member that was expected. The ``code`` is stable
/// and meant for programs; the ``message`` is for people.
///
/// ```swift
/// struct Item: Decodable { var count: UInt8 }
/// do {
///     _ = try JSONValueDecoder().decode([Item].self, from: [["count": 1], ["count": 300]])
/// } catch let error as JSONValueCodingError {
///     error.codingPath  // "/1/count"
///     error.code        // .dataCorrupted
/// }
/// ```
public struct JSONValueCodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable classification, one per kind of `EncodingError` and `DecodingError`.
    public enum Code: String, Sendable, Hashable {
        /// A value JSON cannot hold (a non-finite number, an integer a ``JSONValue`` cannot hold exactly),
        /// or an `Encodable` that used its encoder in a way the `Encoder` protocol does not allow.
        case invalidValue = "invalid_value"
        /// The JSON value has another kind than the type expects (a string where a number belongs).
        case typeMismatch = "type_mismatch"
        /// `null`, or the end of an array, where a value was required.
        case valueNotFound = "value_not_found"
        /// An object lacks a member the type requires.
        case keyNotFound = "key_not_found"
        /// The value has the right kind but not a usable content: a number out of the type's range or
        /// not whole where an integer is expected, or what a type's own `init(from:)` refused.
        case dataCorrupted = "data_corrupted"
        /// An error of another type, thrown by a value's own `encode(to:)` or `init(from:)`; the
        /// ``JSONValueCodingError/message`` describes it.
        case other = "other"
    }

    /// The stable classification of the failure.
    public var code: Code
    /// Where the failure happened, as RFC 6901 JSON Pointer text (`""` is the whole value).
    public var codingPath: String
    /// A human-readable explanation.
    public var message: String

    /// Creates a coding error.
    ///
    /// - Parameters:
    ///   - code: The stable classification.
    ///   - codingPath: The JSON Pointer text of the failing location.
    ///   - message: A human-readable explanation.
    public init(code: Code, codingPath: String, message: String) {
        self.code = code
        self.codingPath = codingPath
        self.message = message
    }

    /// The code, the location and the message, e.g. `type_mismatch at /items/2/name: expected String, found a number`.
    public var description: String {
        "\(code.rawValue) at \(codingPath.isEmpty ? "the root" : codingPath): \(message)"
    }
}

extension JSONValueCodingError {
    /// Translates what an encoder, a decoder or a value's own coding code threw.
    ///
    /// The coder's containers throw the standard `EncodingError` and `DecodingError`, so that a type's
    /// `init(from:)` that tries one shape and catches `DecodingError` to try another works as with any
    /// other decoder; the translation happens once, at the public API.
    init(translating error: any Error) {
        switch error {
        case let error as JSONValueCodingError:
            self = error
        case EncodingError.invalidValue(_, let context):
            self.init(code: .invalidValue, context: context.codingPath, message: context.debugDescription)
        case DecodingError.typeMismatch(_, let context):
            self.init(code: .typeMismatch, context: context.codingPath, message: context.debugDescription)
        case DecodingError.valueNotFound(_, let context):
            self.init(code: .valueNotFound, context: context.codingPath, message: context.debugDescription)
        case DecodingError.keyNotFound(let key, let context):
            self.init(code: .keyNotFound, context: context.codingPath + [key], message: context.debugDescription)
        case DecodingError.dataCorrupted(let context):
            self.init(code: .dataCorrupted, context: context.codingPath, message: context.debugDescription)
        default:
            self.init(code: .other, codingPath: "", message: String(describing: error))
        }
    }

    private init(code: Code, context codingPath: [any CodingKey], message: String) {
        self.init(code: code, codingPath: Self.pointerText(codingPath), message: message)
    }

    /// The JSON Pointer text of a coding path: each key's `stringValue`, which is the object member
    /// name the coder uses, or the array index for the coder's own index keys.
    static func pointerText(_ codingPath: [any CodingKey]) -> String {
        JSONPointer(tokens: codingPath.map(\.stringValue)).description
    }
}
