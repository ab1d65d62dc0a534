extension JSONValue {
    /// The compact JSON text of the value as UTF-8 bytes (no insignificant whitespace).
    ///
    /// Object keys are written in insertion order. Integers are written exactly; doubles in the
    /// shortest form that parses back to the same `Double`; non-finite doubles as `null`.
    public var jsonBytes: [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(64)
        encode(into: &buffer)
        return buffer
    }

    /// The compact JSON text of the value.
    ///
    /// ```swift
    /// JSONValue.array([1, 2.5, "a\"b"]).jsonString  // [1,2.5,"a\"b"]
    /// ```
    public var jsonString: String {
        String(decoding: jsonBytes, as: UTF8.self)
    }

    /// Appends the compact JSON text of the value to `buffer`.
    ///
    /// Use this to build larger messages without intermediate copies.
    ///
    /// - Parameter buffer: The buffer to append UTF-8 bytes to.
    public func encode(into buffer: inout [UInt8]) {
        write(into: &buffer)
    }

    /// Calls `body` with the decimal text of `value` (a `-`, then at most 19 digits), made least significant digit
    /// first in stack room: the one integer-to-text of the project's JSON writers (``JSONByteSink/putDecimal(_:)``).
    /// - Parameters:
    ///   - value: the integer.
    ///   - body: receives the text's UTF-8, valid only during the call.
    @inlinable
    public static func withDecimalText(of value: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var rest = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { room in
            var start = room.count
            repeat {
                start -= 1
                room[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            if value < 0 {
                start -= 1
                room[start] = UInt8(ascii: "-")
            }
            body(UnsafeBufferPointer(rebasing: room.bindMemory(to: UInt8.self)[start...]))
        }
    }

    /// Hands `bytes` (UTF-8) to `emit` as the inside of a JSON string, piece by piece: each run of bytes that needs
    /// no escaping as it is, in one call, and each escape sequence (`\"`, `\n`, `\u001f`, …). The one escaper behind
    /// every JSON string this project writes, into an array or (a log line) into a buffer of its own.
    /// - Parameters:
    ///   - bytes: the string's UTF-8.
    ///   - emit: receives the pieces in order; each buffer is valid only during the call.
    @inlinable @inline(__always)
    public static func forEachEscapedPiece(
        of bytes: UnsafeBufferPointer<UInt8>, _ emit: (UnsafeBufferPointer<UInt8>) -> Void
    ) {
        // Nearly every string needs no escape at all (a name, an id, a path): found eight bytes at a time and handed
        // over in one piece; the byte-by-byte walk starts only at the word that may hold an escape.
        let plain = plainPrefixCount(of: bytes)
        if plain == bytes.count {
            if plain > 0 { emit(bytes) }
            return
        }
        var runStart = 0
        for index in plain..<bytes.count {
            let byte = bytes[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if runStart < index { emit(UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
            runStart = index + 1
            let second: UInt8
            switch byte {
            case UInt8(ascii: "\""): second = UInt8(ascii: "\"")
            case UInt8(ascii: "\\"): second = UInt8(ascii: "\\")
            case 0x0A: second = UInt8(ascii: "n")
            case 0x0D: second = UInt8(ascii: "r")
            case 0x09: second = UInt8(ascii: "t")
            case 0x08: second = UInt8(ascii: "b")
            case 0x0C: second = UInt8(ascii: "f")
            default: second = 0
            }
            let hexDigits: StaticString = "0123456789abcdef"
            var escape: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
                second != 0
                ? (UInt8(ascii: "\\"), second, 0, 0, 0, 0)
                : (
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                    hexDigits.utf8Start[Int(byte >> 4)], hexDigits.utf8Start[Int(byte & 0x0F)]
                )
            withUnsafeBytes(of: &escape) { raw in
                emit(UnsafeBufferPointer(rebasing: raw.bindMemory(to: UInt8.self)[..<(second != 0 ? 2 : 6)]))
            }
        }
        if runStart < bytes.count { emit(UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count])) }
    }

    /// How many leading bytes of `bytes` (UTF-8) a JSON string holds as they are, none of them a control character,
    /// a quotation mark or a backslash: all of them when the result is `bytes.count`. Checked eight bytes at a time:
    /// a byte `b` of a word `w` needs an escape when `b < 0x20` or when it equals 0x22 or 0x5C, and the classic
    /// "has a zero byte" test finds either anywhere in the word at once. The count stops at the first word that may
    /// hold such a byte (the test can flag a word that holds none, never miss one), then goes on a byte at a time
    /// only for the last few bytes, so a caller walks on from it byte by byte.
    /// - Parameter bytes: the string's UTF-8.
    /// - Returns: a count of bytes that need no escape, from the start.
    @inlinable
    public static func plainPrefixCount(of bytes: UnsafeBufferPointer<UInt8>) -> Int {
        guard let start = UnsafeRawPointer(bytes.baseAddress) else { return 0 }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = start.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            // Bytes below 0x20: those whose value minus 0x20 borrows (for bytes without the high bit); a byte with it
            // (UTF-8 beyond ASCII) never needs an escape, so its bits are masked out.
            let controls = (word &- 0x2020_2020_2020_2020) & ~word & highs
            let quote = word ^ 0x2222_2222_2222_2222
            let backslash = word ^ 0x5C5C_5C5C_5C5C_5C5C
            let zeroInQuote = (quote &- ones) & ~quote & highs
            let zeroInBackslash = (backslash &- ones) & ~backslash & highs
            if controls | zeroInQuote | zeroInBackslash != 0 { return offset }
            offset += 8
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return offset }
            offset += 1
        }
        return offset
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text of the value.
    public var description: String {
        jsonString
    }
}
