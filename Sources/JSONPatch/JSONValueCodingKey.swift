/// The coding key the JSON value coder makes itself: an object member name, an array index, or `super`.
///
/// An index key's `stringValue` is the index in decimal, so that a coding path turns into a JSON
/// Pointer by taking every key's `stringValue`.
struct JSONValueCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }

    /// The key of an array element.
    init(index: Int) {
        self.init(intValue: index)
    }

    /// The key `superEncoder()` and `superDecoder()` use, as the `Codable` documentation specifies.
    static let superKey = JSONValueCodingKey(stringValue: "super")
}
