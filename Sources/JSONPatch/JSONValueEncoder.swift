/// Encodes `Encodable` values into ``JSONValue``s: the standard library only, no JSON text in between.
///
/// The result is deterministic, so the same value always gives the same JSON text:
/// - Object members keep the order in which the value encoded them (declaration order for
///   synthesized conformances).
/// - A `Dictionary`'s members are sorted by the UTF-8 bytes of their keys, and a `Set`'s elements
///   (and the key/value pairs of a dictionary whose keys are neither strings nor integers) by the
///   bytes of their JSON text: their own iteration order follows hashing, which differs from one
///   process to the next.
///
/// A value JSON cannot hold is an error, not a silent change: a NaN or infinite `Double` or `Float`,
/// and an integer beyond `Int`'s range that a `Double` does not hold exactly (`UInt64.max`; those that
/// it does hold, such as 2^63, become ``JSONValue/double(_:)``). A ``JSONValue`` inside the value is
/// taken as it is. A value that encodes nothing at all becomes the empty object.
///
/// ```swift
/// struct Person: Codable { var name: String; var age: Int; var nickname: String? }
/// let value = try JSONValueEncoder().encode(Person(name: "Ada", age: 36, nickname: nil))
/// value.jsonString  // {"name":"Ada","age":36}
/// ```
public struct JSONValueEncoder: Sendable {
    /// Context for the values' own `encode(to:)`, which they read as `encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates an encoder with empty ``userInfo``.
    public init() {}

    /// Whether an optional member that is nil is written as `null` (`{"error": null}`) instead of being left out,
    /// the standard library's default. Pages write their views so: a client sees every member, always.
    public var writesNilMembers = false

    /// Encodes `value` into a JSON value.
    ///
    /// - Parameter value: The value to encode.
    /// - Returns: Its JSON value.
    /// - Throws: ``JSONValueCodingError`` with the location of the first value that cannot be encoded:
    ///   code ``JSONValueCodingError/Code/invalidValue`` for a value JSON cannot hold, or what the value's
    ///   own `encode(to:)` threw.
    public func encode<T: Encodable>(_ value: T) throws(JSONValueCodingError) -> JSONValue {
        do {
            return try JSONTreeEncoder.value(of: value, at: [], userInfo: userInfo, writesNilMembers: writesNilMembers)
        } catch {
            throw JSONValueCodingError(translating: error)
        }
    }
}
