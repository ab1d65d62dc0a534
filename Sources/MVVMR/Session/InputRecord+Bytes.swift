import JSONPatch

extension InputRecord {
    /// The record's JSON text, byte for byte what `json.jsonBytes` gives, written straight into one buffer: the
    /// form a store keeps, made once per input on the action path without building the JSON tree first.
    public var jsonBytes: [UInt8] {
        // Written into room sized for it (every string counted at its longest escape), in one allocation.
        BoundedBytes.make(capacity: encodedCapacity) { write(into: &$0) }
    }

    /// The most bytes the record's text takes: ``jsonBytes``' room.
    public var encodedCapacity: Int {
        // The members' names and punctuation, and the three integers.
        var capacity = 80 + 3 * BoundedBytes.decimalCapacity + input.encodedCapacity
        // `"unit":"<16 hex digits>",` and `"unit":<integer>,`.
        for unit in digests.keys { capacity += BoundedBytes.escapedCapacity(unit) + 22 }
        for unit in revisions.keys { capacity += BoundedBytes.escapedCapacity(unit) + 4 + BoundedBytes.decimalCapacity }
        if let annotation { capacity += 16 + annotation.encodedCapacity }
        return capacity
    }

    /// Appends the record's JSON text (as ``jsonBytes``) to `buffer`.
    /// - Parameter buffer: the buffer to append UTF-8 bytes to.
    public func encode(into buffer: inout [UInt8]) {
        write(into: &buffer)
    }

    /// Writes the record's JSON text (as ``jsonBytes``) into `sink`: the record's one writer.
    func write<Sink: JSONByteSink>(into buffer: inout Sink) {
        buffer.put(#"{"number":"#)
        buffer.putDecimal(number)
        buffer.put(#","time_ns":"#)
        buffer.putDecimal(Self.nanoseconds(time))
        buffer.put(#","input":"#)
        input.write(into: &buffer)
        buffer.put(#","digests":{"#)
        var first = true
        Self.forEachSorted(digests) { unit, digest in
            if !first { buffer.put(UInt8(ascii: ",")) }
            first = false
            buffer.putString(unit)
            buffer.put(#":""#)
            Self.writeHex(digest, into: &buffer)
            buffer.put(UInt8(ascii: "\""))
        }
        buffer.put(#"},"seq":"#)
        buffer.putDecimal(sequence)
        buffer.put(#","revs":{"#)
        first = true
        Self.forEachSorted(revisions) { unit, revision in
            if !first { buffer.put(UInt8(ascii: ",")) }
            first = false
            buffer.putString(unit)
            buffer.put(UInt8(ascii: ":"))
            buffer.putDecimal(revision)
        }
        buffer.put(UInt8(ascii: "}"))
        if let annotation {
            buffer.put(#","annotation":"#)
            buffer.putValue(annotation)
        }
        buffer.put(UInt8(ascii: "}"))
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

    /// Writes the 16 lowercase hex digits of `digest` (as ``hex(_:)`` writes them).
    static func writeHex<Sink: JSONByteSink>(_ digest: UInt64, into buffer: inout Sink) {
        var shift = 60
        while shift >= 0 {
            let nibble = UInt8(truncatingIfNeeded: (digest >> UInt64(shift)) & 0xf)
            buffer.put(nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ (nibble &- 10))
            shift -= 4
        }
    }
}

extension SessionInput {
    /// Appends the input's JSON text, byte for byte what `json.jsonBytes` gives.
    /// - Parameter buffer: the buffer to append UTF-8 bytes to.
    public func encode(into buffer: inout [UInt8]) {
        write(into: &buffer)
    }

    /// The most bytes the input's JSON text takes.
    public var encodedCapacity: Int {
        // The longest run of member names and punctuation (a start's, about 90 bytes), and two integers.
        let fixed = 112 + 2 * BoundedBytes.decimalCapacity
        switch self {
        case .start(let unit, let parameters, let value, _, _):
            return fixed + BoundedBytes.escapedCapacity(unit) + Self.encodedCapacity(parameters)
                + (value?.encodedCapacity ?? 0)
        case .bind(let unit, let parameters), .navigate(.open(let unit, let parameters)):
            return fixed + BoundedBytes.escapedCapacity(unit) + Self.encodedCapacity(parameters)
        case .action(let unit, let name, let value, _):
            return fixed + BoundedBytes.escapedCapacity(unit) + BoundedBytes.escapedCapacity(name)
                + value.encodedCapacity
        case .rebind(let unit, _):
            return fixed + BoundedBytes.escapedCapacity(unit)
        case .navigate(.back), .navigate(.forward), .timer:
            return fixed
        case .work(_, let result):
            return fixed + result.encodedCapacity
        case .topic(let name, let value):
            return fixed + BoundedBytes.escapedCapacity(name) + value.encodedCapacity
        }
    }

    /// The most bytes route parameters take as a JSON object.
    private static func encodedCapacity(_ parameters: [String: String]) -> Int {
        var capacity = 2
        for (key, value) in parameters {
            capacity += BoundedBytes.escapedCapacity(key) + BoundedBytes.escapedCapacity(value) + 6
        }
        return capacity
    }

    /// Writes the input's JSON text into `buffer`: the input's one writer.
    func write<Sink: JSONByteSink>(into buffer: inout Sink) {
        switch self {
        case .start(let unit, let parameters, let value, let seed, let wallClock):
            buffer.put(#"{"type":"start","unit":"#)
            buffer.putString(unit)
            buffer.put(#","parameters":"#)
            Self.write(parameters, into: &buffer)
            buffer.put(#","seed":""#)
            InputRecord.writeHex(seed, into: &buffer)
            buffer.put(#"","wall_clock_ns":"#)
            buffer.putDecimal(InputRecord.nanoseconds(wallClock))
            if let value {
                buffer.put(#","value":"#)
                buffer.putValue(value)
            }
            buffer.put(UInt8(ascii: "}"))
        case .bind(let unit, let parameters):
            buffer.put(#"{"type":"bind","unit":"#)
            buffer.putString(unit)
            buffer.put(#","parameters":"#)
            Self.write(parameters, into: &buffer)
            buffer.put(UInt8(ascii: "}"))
        case .action(let unit, let name, let value, let clientRevision):
            buffer.put(#"{"type":"action","unit":"#)
            buffer.putString(unit)
            buffer.put(#","action":"#)
            buffer.putString(name)
            buffer.put(#","value":"#)
            buffer.putValue(value)
            if let clientRevision {
                buffer.put(#","rev":"#)
                buffer.putDecimal(clientRevision)
            }
            buffer.put(UInt8(ascii: "}"))
        case .navigate(.back):
            buffer.put(#"{"type":"navigate","navigation":"back"}"#)
        case .navigate(.forward):
            buffer.put(#"{"type":"navigate","navigation":"forward"}"#)
        case .navigate(.open(let unit, let parameters)):
            buffer.put(#"{"type":"navigate","navigation":"open","unit":"#)
            buffer.putString(unit)
            buffer.put(#","parameters":"#)
            Self.write(parameters, into: &buffer)
            buffer.put(UInt8(ascii: "}"))
        case .timer(let ordinal):
            buffer.put(#"{"type":"timer","ordinal":"#)
            buffer.putDecimal(ordinal)
            buffer.put(UInt8(ascii: "}"))
        case .work(let ordinal, let result):
            buffer.put(#"{"type":"work","ordinal":"#)
            buffer.putDecimal(ordinal)
            buffer.put(#","result":"#)
            buffer.putValue(result)
            buffer.put(UInt8(ascii: "}"))
        case .rebind(let unit, let revision):
            buffer.put(#"{"type":"rebind","unit":"#)
            buffer.putString(unit)
            buffer.put(#","rev":"#)
            buffer.putDecimal(revision)
            buffer.put(UInt8(ascii: "}"))
        case .topic(let name, let value):
            buffer.put(#"{"type":"topic","topic":"#)
            buffer.putString(name)
            buffer.put(#","value":"#)
            buffer.putValue(value)
            buffer.put(UInt8(ascii: "}"))
        }
    }

    /// Writes route parameters as a JSON object, keys sorted.
    private static func write<Sink: JSONByteSink>(_ parameters: [String: String], into buffer: inout Sink) {
        buffer.put(UInt8(ascii: "{"))
        var first = true
        InputRecord.forEachSorted(parameters) { key, value in
            if !first { buffer.put(UInt8(ascii: ",")) }
            first = false
            buffer.putString(key)
            buffer.put(UInt8(ascii: ":"))
            buffer.putString(value)
        }
        buffer.put(UInt8(ascii: "}"))
    }
}
