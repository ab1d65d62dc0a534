/// Where the JSON writers of this module put bytes: an array (`encode(into:)` of a value, a pointer or a patch), or
/// room sized beforehand (``BoundedBytes``, with an `encodedCapacity`), which skips the array's capacity and
/// uniqueness checks at every piece. Each writer is written once, generic over its sink, and specialized for both.
public protocol JSONByteSink {
    /// Puts one byte.
    /// - Parameter byte: the byte.
    mutating func put(_ byte: UInt8)
    /// Puts `bytes`.
    /// - Parameter bytes: the bytes.
    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>)
    /// Puts `value`'s compact JSON text (for ``BoundedBytes``, at most its ``JSONValue/encodedCapacity``), through
    /// the module's one value writer specialized for this sink.
    /// - Parameter value: the value.
    mutating func putValue(_ value: JSONValue)
    /// Puts `patch`'s RFC 6902 JSON text (for ``BoundedBytes``, at most its ``JSONPatch/encodedCapacity``), through
    /// the module's one patch writer specialized for this sink.
    /// - Parameter patch: the patch.
    mutating func putPatch(_ patch: JSONPatch)
}

extension JSONByteSink {
    /// Puts a literal's UTF-8.
    /// - Parameter literal: the literal.
    @inlinable @inline(__always)
    public mutating func put(_ literal: StaticString) {
        literal.withUTF8Buffer { put($0) }
    }

    /// Puts the bytes of an array.
    /// - Parameter bytes: the bytes.
    @inlinable @inline(__always)
    public mutating func put(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { put($0) }
    }

    /// Puts `value` in decimal (a `-`, then at most 19 digits: at most ``BoundedBytes/decimalCapacity`` bytes).
    /// - Parameter value: the integer.
    @inlinable @inline(__always)
    public mutating func putDecimal(_ value: Int) {
        if value >= 0 && value < 10 {
            put(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        JSONValue.withDecimalText(of: value) { put($0) }
    }

    /// Puts UTF-8 `bytes` escaped as the inside of a JSON string (no quotes), as every JSON string of the project
    /// is (``JSONValue/forEachEscapedPiece(of:_:)``, which finds bytes that need no escape eight at a time).
    /// - Parameter bytes: the text's UTF-8.
    @inlinable @inline(__always)
    public mutating func putEscaped(_ bytes: UnsafeBufferPointer<UInt8>) {
        JSONValue.forEachEscapedPiece(of: bytes) { put($0) }
    }

    /// Puts `text` escaped as the inside of a JSON string (no quotes): at most
    /// ``BoundedBytes/escapedCapacity(_:)`` bytes.
    /// - Parameter text: the text.
    @inlinable
    public mutating func putEscaped(_ text: String) {
        // `withUTF8` reads a small string's bytes in place too (a copy of the string is no copy of its bytes unless
        // it is a bridged one, which this project never makes).
        var text = text
        text.withUTF8 { putEscaped($0) }
    }

    /// Puts `text` as a JSON string: quoted and escaped (at most ``BoundedBytes/escapedCapacity(_:)`` + 2 bytes).
    /// - Parameter text: the text.
    @inlinable
    public mutating func putString(_ text: String) {
        put(UInt8(ascii: "\""))
        putEscaped(text)
        put(UInt8(ascii: "\""))
    }
}

extension Array: JSONByteSink where Element == UInt8 {
    /// Appends `byte`.
    /// - Parameter byte: the byte.
    @inlinable @inline(__always)
    public mutating func put(_ byte: UInt8) {
        append(byte)
    }

    /// Appends `bytes`.
    /// - Parameter bytes: the bytes.
    @inlinable @inline(__always)
    public mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        append(contentsOf: bytes)
    }

    /// Appends `value`'s compact JSON text.
    /// - Parameter value: the value.
    public mutating func putValue(_ value: JSONValue) {
        value.write(into: &self)
    }

    /// Appends `patch`'s JSON text.
    /// - Parameter patch: the patch.
    public mutating func putPatch(_ patch: JSONPatch) {
        patch.write(into: &self)
    }
}

extension BoundedBytes: JSONByteSink {
    /// Writes `value`'s compact JSON text (at most its ``JSONValue/encodedCapacity`` bytes).
    /// - Parameter value: the value.
    public mutating func putValue(_ value: JSONValue) {
        value.write(into: &self)
    }

    /// Writes `patch`'s JSON text (at most its ``JSONPatch/encodedCapacity`` bytes).
    /// - Parameter patch: the patch.
    public mutating func putPatch(_ patch: JSONPatch) {
        patch.write(into: &self)
    }
}

extension JSONValue {
    /// Writes the value's compact JSON text into `sink`: the one writer of a value's text.
    func write<Sink: JSONByteSink>(into sink: inout Sink) {
        switch self {
        case .null:
            sink.put("null")
        case .bool(let value):
            sink.put(value ? "true" : "false")
        case .int(let value):
            sink.putDecimal(value)
        case .double(let value):
            // Swift's description is the shortest text that round-trips ("1.0", "1e-05", "1.5e+300"), always valid
            // JSON for finite values, and keeps a '.' or exponent so it parses back as a double.
            guard value.isFinite else {
                sink.put("null")
                return
            }
            var text = value.description
            text.withUTF8 { sink.put($0) }
        case .string(let value):
            sink.putString(value)
        case .array(let elements):
            sink.put(UInt8(ascii: "["))
            for index in elements.indices {
                if index > 0 { sink.put(UInt8(ascii: ",")) }
                elements[index].write(into: &sink)
            }
            sink.put(UInt8(ascii: "]"))
        case .object(let object):
            sink.put(UInt8(ascii: "{"))
            var first = true
            for (key, value) in object {
                if !first { sink.put(UInt8(ascii: ",")) }
                first = false
                sink.putString(key)
                sink.put(UInt8(ascii: ":"))
                value.write(into: &sink)
            }
            sink.put(UInt8(ascii: "}"))
        }
    }

    /// The most bytes the value's JSON text can take (its exact length for most values, more for strings, whose
    /// every byte is counted as a six-byte escape, and doubles): room sized for a ``BoundedBytes`` writer.
    public var encodedCapacity: Int {
        switch self {
        case .null, .bool: return 5
        case .int: return BoundedBytes.decimalCapacity
        // The longest `description` of a finite double is 24 bytes ("-2.2250738585072014e-308").
        case .double: return 32
        case .string(let value): return BoundedBytes.escapedCapacity(value) + 2
        case .array(let elements):
            var capacity = 2 + elements.count
            for element in elements { capacity += element.encodedCapacity }
            return capacity
        case .object(let object):
            var capacity = 2 + object.count
            for (key, value) in object { capacity += BoundedBytes.escapedCapacity(key) + 3 + value.encodedCapacity }
            return capacity
        }
    }
}

extension JSONPointer {
    /// Writes the pointer's text as a JSON string (quoted, escaped): the same bytes as
    /// `JSONValue.string(description)`'s text.
    func writeJSONString<Sink: JSONByteSink>(into sink: inout Sink) {
        sink.put(UInt8(ascii: "\""))
        for token in tokens {
            sink.put(UInt8(ascii: "/"))
            var token = token
            token.withUTF8 { bytes in
                if Self.needsEscaping(bytes) {
                    Self.escaped(bytes).withUnsafeBufferPointer { sink.putEscaped($0) }
                } else {
                    sink.putEscaped(bytes)
                }
            }
        }
        sink.put(UInt8(ascii: "\""))
    }

    /// The most bytes the pointer's text takes as a JSON string: each token's byte counted as a six-byte escape
    /// (`~` and `/` become two bytes, then need no JSON escape), its `/`, and the quotes.
    public var encodedCapacity: Int {
        var capacity = 2 + tokens.count
        for token in tokens { capacity += BoundedBytes.escapedCapacity(token) }
        return capacity
    }
}

extension PatchOperation {
    /// Writes the operation's RFC 6902 JSON text: the members ``json`` has, in the same order.
    func write<Sink: JSONByteSink>(into sink: inout Sink) {
        sink.put(#"{"op":""#)
        switch self {
        case .add: sink.put("add")
        case .remove: sink.put("remove")
        case .replace: sink.put("replace")
        case .move: sink.put("move")
        case .copy: sink.put("copy")
        case .test: sink.put("test")
        }
        switch self {
        case .add(let path, let value), .replace(let path, let value), .test(let path, let value):
            sink.put(#"","path":"#)
            path.writeJSONString(into: &sink)
            sink.put(#","value":"#)
            value.write(into: &sink)
        case .remove(let path):
            sink.put(#"","path":"#)
            path.writeJSONString(into: &sink)
        case .move(let from, let path), .copy(let from, let path):
            sink.put(#"","from":"#)
            from.writeJSONString(into: &sink)
            sink.put(#","path":"#)
            path.writeJSONString(into: &sink)
        }
        sink.put(UInt8(ascii: "}"))
    }

    /// The most bytes the operation's JSON text takes.
    public var encodedCapacity: Int {
        // `{"op":"replace","from":` and `,"path":` and `,"value":` and `}`, at most 40 bytes around the members.
        switch self {
        case .add(let path, let value), .replace(let path, let value), .test(let path, let value):
            return 40 + path.encodedCapacity + value.encodedCapacity
        case .remove(let path):
            return 40 + path.encodedCapacity
        case .move(let from, let path), .copy(let from, let path):
            return 40 + from.encodedCapacity + path.encodedCapacity
        }
    }
}

extension JSONPatch {
    /// Writes the patch's RFC 6902 JSON text: an array of its operations.
    func write<Sink: JSONByteSink>(into sink: inout Sink) {
        sink.put(UInt8(ascii: "["))
        for index in operations.indices {
            if index > 0 { sink.put(UInt8(ascii: ",")) }
            operations[index].write(into: &sink)
        }
        sink.put(UInt8(ascii: "]"))
    }

    /// The most bytes the patch's JSON text takes: room sized for ``JSONByteSink/putPatch(_:)``.
    public var encodedCapacity: Int {
        var capacity = 2 + operations.count
        for operation in operations { capacity += operation.encodedCapacity }
        return capacity
    }
}
