/// An iterative JSON parser over a contiguous UTF-8 buffer.
///
/// Containers under construction live on an explicit stack (`frames`) rather than the call
/// stack, so nesting depth is limited only by `maxDepth`, never by thread stack size.
struct JSONParser {
    /// The kind of a container being built.
    private enum ContainerKind {
        case array
        case object
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private let maxDepth: Int
    private var position = 0
    /// Reused buffer for strings that need unescaping.
    private var scratch: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    // MARK: - Document structure

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        // Open containers, innermost last. Arrays and objects under construction are kept in
        // separate stacks (not inside an enum) so that appending mutates them in place;
        // moving them in and out of enum payloads would copy them on every element.
        var open: [ContainerKind] = []
        var arrays: [[JSONValue]] = []
        var objects: [JSONObject] = []
        var pendingKeys: [String] = []
        skipWhitespace()
        switch parseFlatObject() {
        case .whole(let value):
            return value
        case .nested(let object, let key):
            // The top-level object goes on, from its first array or object member, as any open object does.
            open.reserveCapacity(4)
            objects.reserveCapacity(2)
            pendingKeys.reserveCapacity(2)
            open.append(.object)
            objects.append(object)
            pendingKeys.append(key)
        case .other:
            break
        }
        while true {
            // Parse one value, or open a container and loop to parse its first element.
            var value: JSONValue
            let byte = try currentByte(expecting: "a value")
            switch byte {
            case UInt8(ascii: "["):
                try checkDepth(open.count)
                position += 1
                skipWhitespace()
                if try currentByte(expecting: "a value or ']'") == UInt8(ascii: "]") {
                    position += 1
                    value = .array([])
                } else {
                    open.append(.array)
                    arrays.append([])
                    continue
                }
            case UInt8(ascii: "{"):
                try checkDepth(open.count)
                position += 1
                skipWhitespace()
                if try currentByte(expecting: "a key or '}'") == UInt8(ascii: "}") {
                    position += 1
                    value = .object(JSONObject())
                } else {
                    if open.isEmpty {
                        // Room for a few levels at the first object: a request body (an object holding a value) then
                        // grows none of the stacks, each of which would allocate again at its second element.
                        open.reserveCapacity(4)
                        objects.reserveCapacity(2)
                        pendingKeys.reserveCapacity(2)
                    }
                    pendingKeys.append(try parseKeyAndColon())
                    open.append(.object)
                    objects.append(JSONObject(minimumCapacity: 2))
                    continue
                }
            default:
                guard let scalar = try parseScalar(startingWith: byte) else {
                    throw error(.unexpectedCharacter, "unexpected \(describe(byte)), expected a value")
                }
                value = scalar
            }

            // Attach the finished value to the enclosing containers, closing as many as end here.
            while true {
                guard let kind = open.last else {
                    skipWhitespace()
                    if position < bytes.count {
                        throw error(.trailingData, "unexpected \(describe(bytes[position])) after the top-level value")
                    }
                    return value
                }
                skipWhitespace()
                switch kind {
                case .array:
                    arrays[arrays.count - 1].append(value)
                    let next = try currentByte(expecting: "',' or ']'")
                    if next == UInt8(ascii: ",") {
                        position += 1
                        skipWhitespace()
                    } else if next == UInt8(ascii: "]") {
                        position += 1
                        open.removeLast()
                        value = .array(arrays.removeLast())
                        continue
                    } else {
                        throw error(.unexpectedCharacter, "unexpected \(describe(next)) in array, expected ',' or ']'")
                    }
                case .object:
                    objects[objects.count - 1].updateValue(value, forKey: pendingKeys.removeLast())
                    let next = try currentByte(expecting: "',' or '}'")
                    if next == UInt8(ascii: ",") {
                        position += 1
                        skipWhitespace()
                        pendingKeys.append(try parseKeyAndColon())
                    } else if next == UInt8(ascii: "}") {
                        position += 1
                        open.removeLast()
                        value = .object(objects.removeLast())
                        continue
                    } else {
                        throw error(.unexpectedCharacter, "unexpected \(describe(next)) in object, expected ',' or '}'")
                    }
                }
                break
            }
        }
    }

    /// How far the shortcut for a top-level object of scalars got.
    private enum FlatObject {
        /// The whole document: one object, every value a scalar.
        case whole(JSONValue)
        /// A top-level object read up to the first member whose value is an array or an object: the members before
        /// it, and its key; the position is at the member's value.
        case nested(JSONObject, key: String)
        /// Not an object, or malformed: the position is back where it was, for the general parse, which reports
        /// any error itself.
        case other
    }

    /// Reads a top-level object's members while their values are scalars (all of an action's body, the first few
    /// of a stored record), without the container stacks of the general parse, which would cost an allocation each.
    private mutating func parseFlatObject() -> FlatObject {
        let start = position
        do throws(JSONParseError) {
            guard try openTopLevelObject() else { return backTrack(to: start) }
            var object = JSONObject(minimumCapacity: 3)
            while true {
                let key = try parseKeyAndColon()
                let byte = try currentByte(expecting: "a value")
                if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") { return .nested(object, key: key) }
                guard let value = try parseScalar(startingWith: byte) else { return backTrack(to: start) }
                object.updateValue(value, forKey: key)
                switch try readAfterTopLevelMember() {
                case .another: continue
                case .documentEnd: return .whole(.object(object))
                case .other: return backTrack(to: start)
                }
            }
        } catch {
            return backTrack(to: start)
        }
    }

    /// What follows a member of the top-level object that the shortcuts read.
    private enum AfterTopLevelMember {
        /// A comma: another member follows (the position is at it).
        case another
        /// The object's end, and the document's.
        case documentEnd
        /// Anything else: the shortcut gives up.
        case other
    }

    /// Reads the start of a top-level object with at least one member: false (the position anywhere) when the
    /// document is not one, or its object is empty.
    @inline(__always)
    private mutating func openTopLevelObject() throws(JSONParseError) -> Bool {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "{"), maxDepth > 0 else { return false }
        position += 1
        skipWhitespace()
        return try currentByte(expecting: "a key or '}'") != UInt8(ascii: "}")
    }

    /// Reads what follows a top-level member's value: a comma, or the object's closing brace ending the document.
    @inline(__always)
    private mutating func readAfterTopLevelMember() throws(JSONParseError) -> AfterTopLevelMember {
        skipWhitespace()
        let next = try currentByte(expecting: "',' or '}'")
        if next == UInt8(ascii: ",") {
            position += 1
            skipWhitespace()
            return .another
        }
        guard next == UInt8(ascii: "}") else { return .other }
        position += 1
        skipWhitespace()
        return position == bytes.count ? .documentEnd : .other
    }

    /// Reads a document that is one object whose values are all scalars, handing each member to `member` in order
    /// without building the object (what an action's body is). Whitespace is skipped as the general parse skips it.
    /// Returns false, with the position back at the start, when the document is anything else or malformed: the
    /// members handed over so far are then to be discarded, and the general parse reports any error.
    mutating func parseScalarMembers(_ member: (UnsafeBufferPointer<UInt8>, JSONValue) -> Void) -> Bool {
        let start = position
        skipWhitespace()
        do throws(JSONParseError) {
            guard try openTopLevelObject() else { return isBackTracked(to: start) }
            while true {
                let key = try parseKeyBytesAndColon()
                guard let value = try parseScalar(startingWith: try currentByte(expecting: "a value")) else {
                    return isBackTracked(to: start)
                }
                switch key {
                case .plain(let range): member(UnsafeBufferPointer(rebasing: bytes[range]), value)
                case .unescaped(var text): text.withUTF8 { member($0, value) }
                }
                switch try readAfterTopLevelMember() {
                case .another: continue
                case .documentEnd: return true
                case .other: return isBackTracked(to: start)
                }
            }
        } catch {
            return isBackTracked(to: start)
        }
    }

    /// Puts the position back at `start`; false, for a shortcut that gives up.
    private mutating func isBackTracked(to start: Int) -> Bool {
        position = start
        return false
    }

    /// A member's key as ``parseKeyBytesAndColon()`` reads it.
    private enum MemberKey {
        /// The range of its bytes, which need no unescaping.
        case plain(Range<Int>)
        /// Its text, unescaped.
        case unescaped(String)
    }

    /// Reads a member's key and the colon after it, making a `String` of the key only when it has escapes or text
    /// that is not ASCII. The position ends at the value.
    private mutating func parseKeyBytesAndColon() throws(JSONParseError) -> MemberKey {
        try expectKeyQuote()
        let key: MemberKey
        let start = position + 1
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"),
            bytes[end] >= 0x20, bytes[end] < 0x80
        {
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            key = .plain(start..<end)
            position = end + 1
        } else {
            // Escapes, control characters or multibyte text: the general string parse checks and unescapes it.
            key = .unescaped(try parseString())
        }
        try readColon()
        return key
    }

    /// The string, literal or number that `byte`, the current one, begins; `nil` when it begins none.
    @inline(__always)
    private mutating func parseScalar(startingWith byte: UInt8) throws(JSONParseError) -> JSONValue? {
        switch byte {
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        default:
            return nil
        }
    }

    /// Puts the position back at `start`: the shortcut gives the document up to the general parse.
    private mutating func backTrack(to start: Int) -> FlatObject {
        position = start
        return .other
    }

    private func checkDepth(_ openContainers: Int) throws(JSONParseError) {
        if openContainers >= maxDepth {
            throw error(.nestingTooDeep, "arrays and objects nested deeper than \(maxDepth) levels")
        }
    }

    /// Parses `"key"` then whitespace, `:` and whitespace.
    private mutating func parseKeyAndColon() throws(JSONParseError) -> String {
        try expectKeyQuote()
        let key = try parseString()
        try readColon()
        return key
    }

    /// Checks that the current byte opens a string key (the position stays at it).
    @inline(__always)
    private func expectKeyQuote() throws(JSONParseError) {
        let byte = try currentByte(expecting: "a string key")
        guard byte == UInt8(ascii: "\"") else {
            throw error(.unexpectedCharacter, "unexpected \(describe(byte)), expected a string key")
        }
    }

    /// Reads the colon after an object key and the whitespace around it; the position ends at the value.
    @inline(__always)
    private mutating func readColon() throws(JSONParseError) {
        skipWhitespace()
        let colon = try currentByte(expecting: "':'")
        guard colon == UInt8(ascii: ":") else {
            throw error(.unexpectedCharacter, "unexpected \(describe(colon)) after object key, expected ':'")
        }
        position += 1
        skipWhitespace()
    }

    // MARK: - Scalars

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        let start = literal.utf8Start
        for offset in 0..<count {
            guard position + offset < bytes.count else {
                position += offset
                throw error(.unexpectedEnd, "input ended inside literal '\(literal)'")
            }
            if bytes[position + offset] != start[offset] {
                position += offset
                throw error(.unexpectedCharacter, "unexpected \(describe(bytes[position])), expected literal '\(literal)'")
            }
        }
        position += count
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = position
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        guard position < bytes.count else { throw error(.unexpectedEnd, "input ended inside a number") }
        // Accumulate negatively so Int.min parses without overflow.
        var accumulator = 0
        var overflow = false
        let firstDigit = bytes[position]
        if firstDigit == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) {
                throw error(.invalidNumber, "leading zeros are not allowed in numbers")
            }
        } else if isDigit(firstDigit) {
            while position < bytes.count, isDigit(bytes[position]) {
                let digit = Int(bytes[position] &- UInt8(ascii: "0"))
                if !overflow {
                    let (times10, o1) = accumulator.multipliedReportingOverflow(by: 10)
                    let (next, o2) = times10.subtractingReportingOverflow(digit)
                    if o1 || o2 { overflow = true } else { accumulator = next }
                }
                position += 1
            }
        } else {
            throw error(.invalidNumber, "unexpected \(describe(firstDigit)), expected a digit")
        }
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            try expectDigits(after: "'.'")
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            try expectDigits(after: "the exponent")
        }
        if isInteger && !overflow {
            if negative { return .int(accumulator) }
            let (positive, flipOverflow) = (0).subtractingReportingOverflow(accumulator)
            if !flipOverflow { return .int(positive) }
        }
        // Integers beyond Int's range, fractions and exponents: Double's parser rounds correctly.
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else {
            position = start
            throw error(.numberOutOfRange, "number \(text) is too large to represent")
        }
        return .double(double)
    }

    private mutating func expectDigits(after what: String) throws(JSONParseError) {
        guard position < bytes.count else { throw error(.unexpectedEnd, "input ended inside a number") }
        guard isDigit(bytes[position]) else {
            throw error(.invalidNumber, "unexpected \(describe(bytes[position])), expected a digit after \(what)")
        }
        while position < bytes.count, isDigit(bytes[position]) { position += 1 }
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    // MARK: - Strings

    /// Parses a string starting at its opening quote.
    private mutating func parseString() throws(JSONParseError) -> String {
        position += 1
        let start = position
        // Fast path: printable ASCII without escapes is copied straight into a String.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
            position += 1
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while true {
            guard position < bytes.count else { throw error(.unexpectedEnd, "input ended inside a string") }
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                // Every byte in scratch is validated UTF-8 or produced from a valid scalar.
                return String(decoding: scratch, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape()
            case 0..<0x20:
                throw error(.controlCharacter, "unescaped control character \(describe(byte)) in string")
            case 0x80...:
                try copyMultibyteSequence()
            default:
                scratch.append(byte)
                position += 1
            }
        }
    }

    private mutating func parseEscape() throws(JSONParseError) {
        let escapeStart = position
        position += 1
        guard position < bytes.count else { throw error(.unexpectedEnd, "input ended inside an escape") }
        let byte = bytes[position]
        position += 1
        switch byte {
        case UInt8(ascii: "\""): scratch.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): scratch.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHex4()
            var scalarValue = UInt32(unit)
            if (0xD800...0xDBFF).contains(unit) {
                // A high surrogate must be followed by an escaped low surrogate.
                guard position + 1 < bytes.count,
                      bytes[position] == UInt8(ascii: "\\"),
                      bytes[position + 1] == UInt8(ascii: "u")
                else {
                    position = escapeStart
                    throw error(.invalidSurrogate, "high surrogate \\u\(hex(unit)) is not followed by a low surrogate")
                }
                position += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    position = escapeStart
                    throw error(.invalidSurrogate, "high surrogate \\u\(hex(unit)) is followed by \\u\(hex(low)), not a low surrogate")
                }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(unit) {
                position = escapeStart
                throw error(.invalidSurrogate, "unpaired low surrogate \\u\(hex(unit))")
            }
            guard let scalar = Unicode.Scalar(scalarValue) else {
                position = escapeStart
                throw error(.invalidSurrogate, "invalid code point in escape")
            }
            scratch.append(contentsOf: scalar.utf8)
        default:
            position = escapeStart
            throw error(.invalidEscape, "unknown escape \\\(describeCharacter(byte))")
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt16 {
        var result: UInt16 = 0
        for _ in 0..<4 {
            guard position < bytes.count else { throw error(.unexpectedEnd, "input ended inside a \\u escape") }
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.invalidEscape, "unexpected \(describe(byte)) in \\u escape, expected a hex digit")
            }
            result = result << 4 | UInt16(digit)
            position += 1
        }
        return result
    }

    /// Validates one multi-byte UTF-8 sequence (RFC 3629: no overlongs, surrogates or values
    /// above U+10FFFF) and copies it to `scratch`.
    private mutating func copyMultibyteSequence() throws(JSONParseError) {
        let lead = bytes[position]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw error(.invalidUTF8, "invalid UTF-8 lead byte \(describe(lead))")
        }
        for offset in 1..<length {
            guard position + offset < bytes.count else {
                position += offset
                throw error(.invalidUTF8, "input ended inside a UTF-8 sequence")
            }
            let byte = bytes[position + offset]
            let valid = offset == 1 ? secondRange.contains(byte) : (0x80...0xBF).contains(byte)
            if !valid {
                position += offset
                throw error(.invalidUTF8, "invalid UTF-8 continuation byte \(describe(byte))")
            }
        }
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[position..<(position + length)]))
        position += length
    }

    // MARK: - Helpers

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                position += 1
            default:
                return
            }
        }
    }

    private func currentByte(expecting what: String) throws(JSONParseError) -> UInt8 {
        guard position < bytes.count else {
            throw error(.unexpectedEnd, position == 0 ? "empty input, expected \(what)" : "input ended, expected \(what)")
        }
        return bytes[position]
    }

    private func error(_ code: JSONParseError.Code, _ message: String) -> JSONParseError {
        JSONParseError(code: code, offset: position, message: message)
    }

    private func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F {
            return "'\(describeCharacter(byte))'"
        }
        return "byte 0x\(hex(UInt16(byte), digits: 2))"
    }

    private func describeCharacter(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F {
            return String(UnicodeScalar(byte))
        }
        return "0x" + hex(UInt16(byte), digits: 2)
    }

    private func hex(_ value: UInt16, digits: Int = 4) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
