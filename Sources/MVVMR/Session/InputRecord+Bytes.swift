import JSONPatch

extension InputRecord {
    /// The record's JSON text, byte for byte what `json.jsonBytes` gives, written straight into one buffer: the
    /// form a store keeps, made once per input on the action path without building the JSON tree first.
    public var jsonBytes: [UInt8] {
        var buffer: [UInt8] = []
        // An increment's record is about 220 bytes: room for it at once, not a second allocation and a copy.
        buffer.reserveCapacity(256)
        encode(into: &buffer)
        return buffer
    }

    /// Appends the record's JSON text (as ``jsonBytes``) to `buffer`.
    /// - Parameter buffer: the buffer to append UTF-8 bytes to.
    public func encode(into buffer: inout [UInt8]) {
        buffer.appendLiteral(#"{"number":"#)
        JSONValue.encodeInteger(number, into: &buffer)
        buffer.appendLiteral(#","time_ns":"#)
        JSONValue.encodeInteger(Self.nanoseconds(time), into: &buffer)
        buffer.appendLiteral(#","input":"#)
        input.encode(into: &buffer)
        buffer.appendLiteral(#","digests":{"#)
        var first = true
        Self.forEachSorted(digests) { unit, digest in
            if !first { buffer.append(UInt8(ascii: ",")) }
            first = false
            JSONValue.encodeString(unit, into: &buffer)
            buffer.appendLiteral(#":""#)
            Self.appendHex(digest, into: &buffer)
            buffer.append(UInt8(ascii: "\""))
        }
        buffer.appendLiteral(#"},"seq":"#)
        JSONValue.encodeInteger(sequence, into: &buffer)
        buffer.appendLiteral(#","revs":{"#)
        first = true
        Self.forEachSorted(revisions) { unit, revision in
            if !first { buffer.append(UInt8(ascii: ",")) }
            first = false
            JSONValue.encodeString(unit, into: &buffer)
            buffer.append(UInt8(ascii: ":"))
            JSONValue.encodeInteger(revision, into: &buffer)
        }
        buffer.append(UInt8(ascii: "}"))
        if let annotation {
            buffer.appendLiteral(#","annotation":"#)
            annotation.encode(into: &buffer)
        }
        buffer.append(UInt8(ascii: "}"))
    }

    /// Calls `body` with each key and value, keys in order. Most records name one page: that one needs neither a
    /// sort nor an array of the keys (two allocations per record, about 900 instructions, when it had both).
    static func forEachSorted<Value>(_ dictionary: [String: Value], _ body: (String, Value) -> Void) {
        if dictionary.count <= 1 {
            for (key, value) in dictionary { body(key, value) }
            return
        }
        for key in dictionary.keys.sorted() {
            if let value = dictionary[key] { body(key, value) }
        }
    }

    /// Appends the 16 lowercase hex digits of `digest` (as ``hex(_:)`` writes them).
    static func appendHex(_ digest: UInt64, into buffer: inout [UInt8]) {
        var shift = 60
        while shift >= 0 {
            let nibble = UInt8(truncatingIfNeeded: (digest >> UInt64(shift)) & 0xf)
            buffer.append(nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ (nibble &- 10))
            shift -= 4
        }
    }
}

extension SessionInput {
    /// Appends the input's JSON text, byte for byte what `json.jsonBytes` gives.
    /// - Parameter buffer: the buffer to append UTF-8 bytes to.
    public func encode(into buffer: inout [UInt8]) {
        switch self {
        case .start(let unit, let parameters, let value, let seed, let wallClock):
            buffer.appendLiteral(#"{"type":"start","unit":"#)
            JSONValue.encodeString(unit, into: &buffer)
            buffer.appendLiteral(#","parameters":"#)
            Self.encode(parameters, into: &buffer)
            buffer.appendLiteral(#","seed":""#)
            InputRecord.appendHex(seed, into: &buffer)
            buffer.appendLiteral(#"","wall_clock_ns":"#)
            JSONValue.encodeInteger(InputRecord.nanoseconds(wallClock), into: &buffer)
            if let value {
                buffer.appendLiteral(#","value":"#)
                value.encode(into: &buffer)
            }
            buffer.append(UInt8(ascii: "}"))
        case .bind(let unit, let parameters):
            buffer.appendLiteral(#"{"type":"bind","unit":"#)
            JSONValue.encodeString(unit, into: &buffer)
            buffer.appendLiteral(#","parameters":"#)
            Self.encode(parameters, into: &buffer)
            buffer.append(UInt8(ascii: "}"))
        case .action(let unit, let name, let value, let clientRevision):
            buffer.appendLiteral(#"{"type":"action","unit":"#)
            JSONValue.encodeString(unit, into: &buffer)
            buffer.appendLiteral(#","action":"#)
            JSONValue.encodeString(name, into: &buffer)
            buffer.appendLiteral(#","value":"#)
            value.encode(into: &buffer)
            if let clientRevision {
                buffer.appendLiteral(#","rev":"#)
                JSONValue.encodeInteger(clientRevision, into: &buffer)
            }
            buffer.append(UInt8(ascii: "}"))
        case .navigate(.back):
            buffer.appendLiteral(#"{"type":"navigate","navigation":"back"}"#)
        case .navigate(.forward):
            buffer.appendLiteral(#"{"type":"navigate","navigation":"forward"}"#)
        case .navigate(.open(let unit, let parameters)):
            buffer.appendLiteral(#"{"type":"navigate","navigation":"open","unit":"#)
            JSONValue.encodeString(unit, into: &buffer)
            buffer.appendLiteral(#","parameters":"#)
            Self.encode(parameters, into: &buffer)
            buffer.append(UInt8(ascii: "}"))
        case .timer(let ordinal):
            buffer.appendLiteral(#"{"type":"timer","ordinal":"#)
            JSONValue.encodeInteger(ordinal, into: &buffer)
            buffer.append(UInt8(ascii: "}"))
        case .work(let ordinal, let result):
            buffer.appendLiteral(#"{"type":"work","ordinal":"#)
            JSONValue.encodeInteger(ordinal, into: &buffer)
            buffer.appendLiteral(#","result":"#)
            result.encode(into: &buffer)
            buffer.append(UInt8(ascii: "}"))
        case .rebind(let unit, let revision):
            buffer.appendLiteral(#"{"type":"rebind","unit":"#)
            JSONValue.encodeString(unit, into: &buffer)
            buffer.appendLiteral(#","rev":"#)
            JSONValue.encodeInteger(revision, into: &buffer)
            buffer.append(UInt8(ascii: "}"))
        case .topic(let name, let value):
            buffer.appendLiteral(#"{"type":"topic","topic":"#)
            JSONValue.encodeString(name, into: &buffer)
            buffer.appendLiteral(#","value":"#)
            value.encode(into: &buffer)
            buffer.append(UInt8(ascii: "}"))
        }
    }

    /// Appends route parameters as a JSON object, keys sorted.
    private static func encode(_ parameters: [String: String], into buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "{"))
        var first = true
        InputRecord.forEachSorted(parameters) { key, value in
            if !first { buffer.append(UInt8(ascii: ",")) }
            first = false
            JSONValue.encodeString(key, into: &buffer)
            buffer.append(UInt8(ascii: ":"))
            JSONValue.encodeString(value, into: &buffer)
        }
        buffer.append(UInt8(ascii: "}"))
    }
}
