/// The keyed container of a ``JSONTreeDecoder``: reads members of its object.
struct JSONTreeKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: JSONObject
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    /// The keys the object has that `Key` knows, in the object's order.
    var allKeys: [Key] {
        object.compactMap { Key(stringValue: $0.key) }
    }

    func contains(_ key: Key) -> Bool {
        object.position(ofKey: key.stringValue) != nil
    }

    /// The member's value.
    ///
    /// - Throws: `DecodingError.keyNotFound` if the object lacks it.
    private func member(_ key: Key) throws -> JSONValue {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, DecodingError.Context(codingPath: codingPath, debugDescription: "no member \"\(key.stringValue)\"")
            )
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        try member(key).isNull
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try JSONTreeDecoder.bool(member(key), at: codingPath + [key])
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try JSONTreeDecoder.string(member(key), at: codingPath + [key])
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try JSONTreeDecoder.double(member(key), at: codingPath + [key])
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try JSONTreeDecoder.float(member(key), at: codingPath + [key])
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try JSONTreeDecoder.integer(type, from: member(key), at: codingPath + [key])
    }

    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try JSONTreeDecoder.integer(type, from: member(key), at: codingPath + [key])
    }

    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try JSONTreeDecoder.integer(type, from: member(key), at: codingPath + [key])
    }

    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try JSONTreeDecoder.integer(type, from: member(key), at: codingPath + [key])
    }

    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try JSONTreeDecoder.integer(type, from: member(key), at: codingPath + [key])
    }

    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try JSONTreeDecoder.integer(type, from: member(key), at: codingPath + [key])
    }

    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try JSONTreeDecoder.integer(type, from: member(key), at: codingPath + [key])
    }

    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try JSONTreeDecoder.integer(type, from: member(key), at: codingPath + [key])
    }

    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try JSONTreeDecoder.integer(type, from: member(key), at: codingPath + [key])
    }

    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try JSONTreeDecoder.integer(type, from: member(key), at: codingPath + [key])
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 {
        try JSONTreeDecoder.integer(type, from: member(key), at: codingPath + [key])
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 {
        try JSONTreeDecoder.integer(type, from: member(key), at: codingPath + [key])
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try JSONTreeDecoder.decode(type, from: member(key), at: codingPath + [key], userInfo: userInfo)
    }

    /// `nil` for a missing member or `null`, in one lookup (the protocol's default takes three).
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = object[key.stringValue], !value.isNull else { return nil }
        return try JSONTreeDecoder.decode(type, from: value, at: codingPath + [key], userInfo: userInfo)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try JSONTreeDecoder(value: member(key), codingPath: codingPath + [key], userInfo: userInfo).container(
            keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONTreeDecoder(value: member(key), codingPath: codingPath + [key], userInfo: userInfo).unkeyedContainer()
    }

    /// A decoder for the member `super`, or for `null` if there is none (as `Foundation`'s decoder does).
    func superDecoder() throws -> any Decoder {
        let key = JSONValueCodingKey.superKey
        return JSONTreeDecoder(
            value: object[key.stringValue] ?? .null, codingPath: codingPath + [key], userInfo: userInfo)
    }

    /// A decoder for the member `key`, or for `null` if there is none.
    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONTreeDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key], userInfo: userInfo)
    }
}

/// The unkeyed container of a ``JSONTreeDecoder``: reads the elements of its array in order.
///
/// A read that fails leaves ``currentIndex`` where it was, so a type can try another one.
struct JSONTreeUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]
    private(set) var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: Any]) {
        self.elements = elements
        self.codingPath = codingPath
        self.userInfo = userInfo
    }

    var count: Int? { elements.count }

    var isAtEnd: Bool { currentIndex >= elements.count }

    /// The coding path of the element read next.
    private var currentPath: [any CodingKey] { codingPath + [JSONValueCodingKey(index: currentIndex)] }

    /// The element read next.
    ///
    /// - Throws: `DecodingError.valueNotFound` at the end of the array.
    private func current(_ type: Any.Type) throws -> JSONValue {
        guard currentIndex < elements.count else {
            throw DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: currentPath, debugDescription: "the array ends after \(elements.count) elements"))
        }
        return elements[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard try current(Any?.self).isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let decoded = try JSONTreeDecoder.bool(current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    mutating func decode(_ type: String.Type) throws -> String {
        let decoded = try JSONTreeDecoder.string(current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    mutating func decode(_ type: Double.Type) throws -> Double {
        let decoded = try JSONTreeDecoder.double(current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    mutating func decode(_ type: Float.Type) throws -> Float {
        let decoded = try JSONTreeDecoder.float(current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    mutating func decode(_ type: Int.Type) throws -> Int {
        let decoded = try JSONTreeDecoder.integer(type, from: current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    mutating func decode(_ type: Int8.Type) throws -> Int8 {
        let decoded = try JSONTreeDecoder.integer(type, from: current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    mutating func decode(_ type: Int16.Type) throws -> Int16 {
        let decoded = try JSONTreeDecoder.integer(type, from: current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    mutating func decode(_ type: Int32.Type) throws -> Int32 {
        let decoded = try JSONTreeDecoder.integer(type, from: current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    mutating func decode(_ type: Int64.Type) throws -> Int64 {
        let decoded = try JSONTreeDecoder.integer(type, from: current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    mutating func decode(_ type: UInt.Type) throws -> UInt {
        let decoded = try JSONTreeDecoder.integer(type, from: current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    mutating func decode(_ type: UInt8.Type) throws -> UInt8 {
        let decoded = try JSONTreeDecoder.integer(type, from: current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
        let decoded = try JSONTreeDecoder.integer(type, from: current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
        let decoded = try JSONTreeDecoder.integer(type, from: current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
        let decoded = try JSONTreeDecoder.integer(type, from: current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: Int128.Type) throws -> Int128 {
        let decoded = try JSONTreeDecoder.integer(type, from: current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 {
        let decoded = try JSONTreeDecoder.integer(type, from: current(type), at: currentPath)
        currentIndex += 1
        return decoded
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoded = try JSONTreeDecoder.decode(type, from: current(type), at: currentPath, userInfo: userInfo)
        currentIndex += 1
        return decoded
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let nested = try JSONTreeDecoder(value: current(type), codingPath: currentPath, userInfo: userInfo)
            .container(keyedBy: type)
        currentIndex += 1
        return nested
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let nested = try JSONTreeDecoder(value: current([Any].self), codingPath: currentPath, userInfo: userInfo)
            .unkeyedContainer()
        currentIndex += 1
        return nested
    }

    mutating func superDecoder() throws -> any Decoder {
        let decoder = try JSONTreeDecoder(
            value: current((any Decoder).self), codingPath: currentPath, userInfo: userInfo)
        currentIndex += 1
        return decoder
    }
}
