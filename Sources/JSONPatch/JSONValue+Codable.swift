extension JSONValue: Codable {
    /// Encodes the value through the encoder's containers, so that it works with any encoder:
    /// scalars and `null` through a single value container, arrays through an unkeyed one, objects
    /// through a keyed one in member order. (``JSONValueEncoder`` takes the value as it is.)
    ///
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: What the encoder throws, e.g. for a non-finite ``double(_:)``.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let bool):
            var container = encoder.singleValueContainer()
            try container.encode(bool)
        case .int(let integer):
            var container = encoder.singleValueContainer()
            try container.encode(integer)
        case .double(let number):
            var container = encoder.singleValueContainer()
            try container.encode(number)
        case .string(let string):
            var container = encoder.singleValueContainer()
            try container.encode(string)
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements {
                try container.encode(element)
            }
        case .object(let object):
            try object.encode(to: encoder)
        }
    }

    /// Decodes whatever JSON value the decoder holds, so that it works with any decoder.
    ///
    /// From ``JSONValueDecoder`` the value comes as it is. From another decoder, `null`, a Boolean, an
    /// integer that fits in `Int`, another number, a string, an object and an array are tried in turn.
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError.dataCorrupted` if the decoder holds none of these.
    public init(from decoder: any Decoder) throws {
        if let treeDecoder = decoder as? JSONTreeDecoder {
            self = treeDecoder.value
            return
        }
        if let container = try? decoder.singleValueContainer() {
            if container.decodeNil() {
                self = .null
                return
            }
            if let bool = try? container.decode(Bool.self) {
                self = .bool(bool)
                return
            }
            if let integer = try? container.decode(Int.self) {
                self = .int(integer)
                return
            }
            if let number = try? container.decode(Double.self) {
                self = .double(number)
                return
            }
            if let string = try? container.decode(String.self) {
                self = .string(string)
                return
            }
        }
        if (try? decoder.container(keyedBy: JSONValueCodingKey.self)) != nil {
            self = .object(try JSONObject(from: decoder))
            return
        }
        if var container = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            if let count = container.count { elements.reserveCapacity(count) }
            while !container.isAtEnd {
                elements.append(try container.decode(JSONValue.self))
            }
            self = .array(elements)
            return
        }
        throw DecodingError.dataCorrupted(
            DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "the decoder holds no JSON value"))
    }
}

extension JSONObject: Codable {
    /// Encodes the members through a keyed container, in member order.
    ///
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: What the encoder throws for a member's value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONValueCodingKey.self)
        for (key, value) in self {
            try container.encode(value, forKey: JSONValueCodingKey(stringValue: key))
        }
    }

    /// Decodes the members of a keyed container, in the order the decoder lists its keys.
    ///
    /// From ``JSONValueDecoder`` an object comes as it is.
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError` if the decoder holds no object.
    public init(from decoder: any Decoder) throws {
        if let treeDecoder = decoder as? JSONTreeDecoder {
            self = try JSONTreeDecoder.object(treeDecoder.value, at: treeDecoder.codingPath)
            return
        }
        let container = try decoder.container(keyedBy: JSONValueCodingKey.self)
        self.init()
        for key in container.allKeys {
            self[key.stringValue] = try container.decode(JSONValue.self, forKey: key)
        }
    }
}

extension JSONValue {
    /// Encodes a Swift value into a JSON value with ``JSONValueEncoder``.
    ///
    /// ```swift
    /// let value = try JSONValue(encoding: ["b": 2, "a": 1])  // {"a":1,"b":2}
    /// ```
    ///
    /// - Parameter value: The value to encode.
    /// - Throws: ``JSONValueCodingError`` if a part of `value` cannot be encoded (a NaN, for one).
    public init<T: Encodable>(encoding value: T) throws(JSONValueCodingError) {
        self = try JSONValueEncoder().encode(value)
    }

    /// Decodes a Swift value from this JSON value with ``JSONValueDecoder``.
    ///
    /// ```swift
    /// let point: [Int] = try JSONValue.array([1, 2]).decoded()
    /// let name = try value["name"]?.decoded(as: String.self)
    /// ```
    ///
    /// - Parameter type: The type to decode (inferred from the context when left out).
    /// - Returns: The decoded value.
    /// - Throws: ``JSONValueCodingError`` if the value does not decode as `type`.
    public func decoded<T: Decodable>(as type: T.Type = T.self) throws(JSONValueCodingError) -> T {
        try JSONValueDecoder().decode(type, from: self)
    }
}
