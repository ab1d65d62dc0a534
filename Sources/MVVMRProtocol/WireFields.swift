import JSONPatch

/// The members of a JSON object being read as a message, with errors that name the message and the member.
struct WireFields {
    /// The object's members.
    let members: JSONObject
    /// The message's name in errors (`a page`).
    let message: String

    /// Reads `value` as the object of `message`.
    /// - Throws: ``WireDecodingError`` when `value` is not an object.
    init(_ value: JSONValue, of message: String) throws(WireDecodingError) {
        guard case .object(let members) = value else { throw WireDecodingError("\(message) must be a JSON object") }
        self.members = members
        self.message = message
    }

    /// The member, unless it is absent or `null`.
    func present(_ key: String) -> JSONValue? {
        switch members[key] {
        case nil, .null?: nil
        case let value?: value
        }
    }

    private func missing(_ key: String, _ what: String) -> WireDecodingError {
        WireDecodingError("\(message) needs '\(key)' (\(what))")
    }

    private func wrong(_ key: String, _ what: String) -> WireDecodingError {
        WireDecodingError("'\(key)' of \(message) must be \(what)")
    }

    /// A required member, of any type (`null` included).
    func value(_ key: String) throws(WireDecodingError) -> JSONValue {
        guard let value = members[key] else { throw missing(key, "any JSON") }
        return value
    }

    /// A required string.
    func string(_ key: String) throws(WireDecodingError) -> String {
        guard case .string(let text)? = members[key] else { throw missing(key, "a string") }
        return text
    }

    /// A string, or `nil` when the member is absent or `null`.
    func optionalString(_ key: String) throws(WireDecodingError) -> String? {
        guard let value = present(key) else { return nil }
        guard case .string(let text) = value else { throw wrong(key, "a string or null") }
        return text
    }

    /// A required whole number.
    func int(_ key: String) throws(WireDecodingError) -> Int {
        guard let number = members[key]?.intValue else { throw missing(key, "an integer") }
        return number
    }

    /// A required array of strings.
    func strings(_ key: String) throws(WireDecodingError) -> [String] {
        guard let strings = try optionalStrings(key) else { throw missing(key, "an array of strings") }
        return strings
    }

    /// An array of strings, or `nil` when the member is absent or `null`.
    func optionalStrings(_ key: String) throws(WireDecodingError) -> [String]? {
        guard let value = present(key) else { return nil }
        guard case .array(let elements) = value else { throw wrong(key, "an array of strings") }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for element in elements {
            guard case .string(let text) = element else { throw wrong(key, "an array of strings") }
            strings.append(text)
        }
        return strings
    }

    /// A required member read as a message.
    func message<Message: WireMessage>(_ key: String, as type: Message.Type) throws(WireDecodingError) -> Message {
        guard let value = present(key) else { throw missing(key, Message.componentName) }
        return try Message(json: value)
    }

    /// A member read as a message, or `nil` when it is absent or `null`.
    func optionalMessage<Message: WireMessage>(_ key: String, as type: Message.Type) throws(WireDecodingError) -> Message? {
        guard let value = present(key) else { return nil }
        return try Message(json: value)
    }

    /// An array of messages, empty when the member is absent or `null`.
    func messages<Message: WireMessage>(_ key: String, as type: Message.Type) throws(WireDecodingError) -> [Message] {
        guard let value = present(key) else { return [] }
        guard case .array(let elements) = value else { throw wrong(key, "an array of \(Message.componentName)") }
        var messages: [Message] = []
        messages.reserveCapacity(elements.count)
        for element in elements { messages.append(try Message(json: element)) }
        return messages
    }

    /// A required array of messages.
    func requiredMessages<Message: WireMessage>(_ key: String, as type: Message.Type) throws(WireDecodingError) -> [Message] {
        guard present(key) != nil else { throw missing(key, "an array of \(Message.componentName)") }
        return try messages(key, as: type)
    }

    /// A required JSON Patch.
    func patch(_ key: String) throws(WireDecodingError) -> JSONPatch {
        guard let value = present(key) else { throw missing(key, "a JSON Patch") }
        return try Self.patch(value, in: key)
    }

    /// `value` read as a JSON Patch.
    static func patch(_ value: JSONValue, in key: String) throws(WireDecodingError) -> JSONPatch {
        do {
            return try JSONPatch(json: value)
        } catch {
            throw WireDecodingError("'\(key)' is not a JSON Patch (\(error))")
        }
    }
}

extension Array where Element == UInt8 {
    /// Appends a JSON array of messages.
    mutating func appendMessages<Message: WireMessage>(_ messages: [Message]) {
        append(UInt8(ascii: "["))
        for (index, message) in messages.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            message.encode(into: &self)
        }
        append(UInt8(ascii: "]"))
    }
}
