/// The keyed container of a ``JSONTreeEncoder``: sets members of its object.
struct JSONTreeKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: JSONTreeEncoder

    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil(forKey key: Key) throws {
        encoder.setMember(.null, forKey: key.stringValue)
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        encoder.setMember(.bool(value), forKey: key.stringValue)
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        encoder.setMember(.string(value), forKey: key.stringValue)
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        try encoder.setMember(JSONTreeEncoder.finite(value, at: codingPath + [key]), forKey: key.stringValue)
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        try encoder.setMember(JSONTreeEncoder.finite(value, at: codingPath + [key]), forKey: key.stringValue)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws {
        try encoder.setMember(JSONTreeEncoder.integer(value, at: codingPath + [key]), forKey: key.stringValue)
    }

    mutating func encode(_ value: Int8, forKey key: Key) throws {
        try encoder.setMember(JSONTreeEncoder.integer(value, at: codingPath + [key]), forKey: key.stringValue)
    }

    mutating func encode(_ value: Int16, forKey key: Key) throws {
        try encoder.setMember(JSONTreeEncoder.integer(value, at: codingPath + [key]), forKey: key.stringValue)
    }

    mutating func encode(_ value: Int32, forKey key: Key) throws {
        try encoder.setMember(JSONTreeEncoder.integer(value, at: codingPath + [key]), forKey: key.stringValue)
    }

    mutating func encode(_ value: Int64, forKey key: Key) throws {
        try encoder.setMember(JSONTreeEncoder.integer(value, at: codingPath + [key]), forKey: key.stringValue)
    }

    mutating func encode(_ value: UInt, forKey key: Key) throws {
        try encoder.setMember(JSONTreeEncoder.integer(value, at: codingPath + [key]), forKey: key.stringValue)
    }

    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        try encoder.setMember(JSONTreeEncoder.integer(value, at: codingPath + [key]), forKey: key.stringValue)
    }

    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        try encoder.setMember(JSONTreeEncoder.integer(value, at: codingPath + [key]), forKey: key.stringValue)
    }

    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        try encoder.setMember(JSONTreeEncoder.integer(value, at: codingPath + [key]), forKey: key.stringValue)
    }

    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        try encoder.setMember(JSONTreeEncoder.integer(value, at: codingPath + [key]), forKey: key.stringValue)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128, forKey key: Key) throws {
        try encoder.setMember(JSONTreeEncoder.integer(value, at: codingPath + [key]), forKey: key.stringValue)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128, forKey key: Key) throws {
        try encoder.setMember(JSONTreeEncoder.integer(value, at: codingPath + [key]), forKey: key.stringValue)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encoder.setMember(
            JSONTreeEncoder.value(of: value, at: codingPath + [key], userInfo: encoder.userInfo, writesNilMembers: encoder.writesNilMembers),
            forKey: key.stringValue)
    }

    // Absent optionals: left out (the standard library's default), or `null` when the encoder writes nil members.

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else if encoder.writesNilMembers { try encodeNil(forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        encoder.pendingMember(forKey: key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.pendingMember(forKey: key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        encoder.pendingMember(forKey: JSONValueCodingKey.superKey)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        encoder.pendingMember(forKey: key)
    }
}

/// The unkeyed container of a ``JSONTreeEncoder``: appends elements to its array.
struct JSONTreeUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: JSONTreeEncoder

    var codingPath: [any CodingKey] { encoder.codingPath }

    var count: Int { encoder.elementCount }

    /// The coding path of the element appended next.
    private var nextElementPath: [any CodingKey] { codingPath + [JSONValueCodingKey(index: count)] }

    mutating func encodeNil() throws {
        encoder.appendElement(.null)
    }

    mutating func encode(_ value: Bool) throws {
        encoder.appendElement(.bool(value))
    }

    mutating func encode(_ value: String) throws {
        encoder.appendElement(.string(value))
    }

    mutating func encode(_ value: Double) throws {
        try encoder.appendElement(JSONTreeEncoder.finite(value, at: nextElementPath))
    }

    mutating func encode(_ value: Float) throws {
        try encoder.appendElement(JSONTreeEncoder.finite(value, at: nextElementPath))
    }

    mutating func encode(_ value: Int) throws {
        try encoder.appendElement(JSONTreeEncoder.integer(value, at: nextElementPath))
    }

    mutating func encode(_ value: Int8) throws {
        try encoder.appendElement(JSONTreeEncoder.integer(value, at: nextElementPath))
    }

    mutating func encode(_ value: Int16) throws {
        try encoder.appendElement(JSONTreeEncoder.integer(value, at: nextElementPath))
    }

    mutating func encode(_ value: Int32) throws {
        try encoder.appendElement(JSONTreeEncoder.integer(value, at: nextElementPath))
    }

    mutating func encode(_ value: Int64) throws {
        try encoder.appendElement(JSONTreeEncoder.integer(value, at: nextElementPath))
    }

    mutating func encode(_ value: UInt) throws {
        try encoder.appendElement(JSONTreeEncoder.integer(value, at: nextElementPath))
    }

    mutating func encode(_ value: UInt8) throws {
        try encoder.appendElement(JSONTreeEncoder.integer(value, at: nextElementPath))
    }

    mutating func encode(_ value: UInt16) throws {
        try encoder.appendElement(JSONTreeEncoder.integer(value, at: nextElementPath))
    }

    mutating func encode(_ value: UInt32) throws {
        try encoder.appendElement(JSONTreeEncoder.integer(value, at: nextElementPath))
    }

    mutating func encode(_ value: UInt64) throws {
        try encoder.appendElement(JSONTreeEncoder.integer(value, at: nextElementPath))
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws {
        try encoder.appendElement(JSONTreeEncoder.integer(value, at: nextElementPath))
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws {
        try encoder.appendElement(JSONTreeEncoder.integer(value, at: nextElementPath))
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoder.appendElement(JSONTreeEncoder.value(of: value, at: nextElementPath, userInfo: encoder.userInfo, writesNilMembers: encoder.writesNilMembers))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        encoder.pendingElement().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        encoder.pendingElement().unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        encoder.pendingElement()
    }
}

/// The single value container of a ``JSONTreeEncoder``: sets its one value.
struct JSONTreeSingleValueEncodingContainer: SingleValueEncodingContainer {
    let encoder: JSONTreeEncoder

    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws {
        try encoder.setSingleValue(.null)
    }

    mutating func encode(_ value: Bool) throws {
        try encoder.setSingleValue(.bool(value))
    }

    mutating func encode(_ value: String) throws {
        try encoder.setSingleValue(.string(value))
    }

    mutating func encode(_ value: Double) throws {
        try encoder.setSingleValue(JSONTreeEncoder.finite(value, at: codingPath))
    }

    mutating func encode(_ value: Float) throws {
        try encoder.setSingleValue(JSONTreeEncoder.finite(value, at: codingPath))
    }

    mutating func encode(_ value: Int) throws {
        try encoder.setSingleValue(JSONTreeEncoder.integer(value, at: codingPath))
    }

    mutating func encode(_ value: Int8) throws {
        try encoder.setSingleValue(JSONTreeEncoder.integer(value, at: codingPath))
    }

    mutating func encode(_ value: Int16) throws {
        try encoder.setSingleValue(JSONTreeEncoder.integer(value, at: codingPath))
    }

    mutating func encode(_ value: Int32) throws {
        try encoder.setSingleValue(JSONTreeEncoder.integer(value, at: codingPath))
    }

    mutating func encode(_ value: Int64) throws {
        try encoder.setSingleValue(JSONTreeEncoder.integer(value, at: codingPath))
    }

    mutating func encode(_ value: UInt) throws {
        try encoder.setSingleValue(JSONTreeEncoder.integer(value, at: codingPath))
    }

    mutating func encode(_ value: UInt8) throws {
        try encoder.setSingleValue(JSONTreeEncoder.integer(value, at: codingPath))
    }

    mutating func encode(_ value: UInt16) throws {
        try encoder.setSingleValue(JSONTreeEncoder.integer(value, at: codingPath))
    }

    mutating func encode(_ value: UInt32) throws {
        try encoder.setSingleValue(JSONTreeEncoder.integer(value, at: codingPath))
    }

    mutating func encode(_ value: UInt64) throws {
        try encoder.setSingleValue(JSONTreeEncoder.integer(value, at: codingPath))
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws {
        try encoder.setSingleValue(JSONTreeEncoder.integer(value, at: codingPath))
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws {
        try encoder.setSingleValue(JSONTreeEncoder.integer(value, at: codingPath))
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoder.setSingleValue(JSONTreeEncoder.value(of: value, at: codingPath, userInfo: encoder.userInfo, writesNilMembers: encoder.writesNilMembers))
    }
}
