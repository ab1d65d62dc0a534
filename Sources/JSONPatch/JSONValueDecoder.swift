/// Decodes `Decodable` values from ``JSONValue``s: the standard library only, no JSON text in between.
///
/// Numbers convert where no information is lost: a whole ``JSONValue/double(_:)`` decodes into an
/// integer type, an ``JSONValue/int(_:)`` into `Double` and `Float`. A number outside the target
/// type's range, or a fraction where an integer is expected, is an error (code
/// ``JSONValueCodingError/Code/dataCorrupted``), never a trap. A missing member or `null` decodes
/// into an `Optional` as `nil`. Decoding ``JSONValue`` or ``JSONObject`` gives the value as it is.
///
/// ```swift
/// struct Person: Codable { var name: String; var age: Int; var nickname: String? }
/// let person = try JSONValueDecoder().decode(Person.self, from: ["name": "Ada", "age": 36])
/// person.nickname  // nil
/// ```
public struct JSONValueDecoder: Sendable {
    /// Context for the values' own `init(from:)`, which they read as `decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates a decoder with empty ``userInfo``.
    public init() {}

    /// Decodes a value of `type` from `value`.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - value: The JSON value to decode it from.
    /// - Returns: The decoded value.
    /// - Throws: ``JSONValueCodingError`` with the location of the first part that does not decode:
    ///   a missing member, a value of the wrong kind, a number out of range, or what the type's own
    ///   `init(from:)` threw.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws(JSONValueCodingError) -> T {
        do {
            return try JSONTreeDecoder.decode(type, from: value, at: [], userInfo: userInfo)
        } catch {
            throw JSONValueCodingError(translating: error)
        }
    }
}
