import Foundation
import JSONPatch
import Testing

@Suite("Encoding")
struct JSONEncoderTests {
    @Test func encodesCompactly() {
        let value: JSONValue = ["a": [1, 2.5, "x", true, nil], "b": .object([:]), "c": []]
        #expect(value.jsonString == #"{"a":[1,2.5,"x",true,null],"b":{},"c":[]}"#)
        #expect(value.jsonBytes == Array(value.jsonString.utf8))
        #expect(value.description == value.jsonString)
        var buffer = Array("prefix:".utf8)
        value.encode(into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == "prefix:" + value.jsonString)
    }

    @Test(arguments: [
        ("plain", #""plain""#),
        ("quote\"backslash\\", #""quote\"backslash\\""#),
        ("\n\r\t\u{08}\u{0C}", #""\n\r\t\b\f""#),
        ("\u{00}\u{1F}\u{7F}", "\"\\u0000\\u001f\u{7F}\""),
        ("slash/é😀", "\"slash/é😀\""),
    ])
    func escapesWhatItMust(text: String, expected: String) throws {
        let encoded = JSONValue.string(text).jsonString
        #expect(encoded == expected)
        #expect(try JSONValue(parsing: encoded) == .string(text))
    }

    /// The eight-bytes-at-a-time prefix never passes a byte that needs an escape, covers the whole string when none
    /// does, and the escaper built on it writes text that reads back as the string, at every length and position.
    @Test func theWordWisePlainPrefixAgreesWithTheByteRule() throws {
        var generator = SystemRandomNumberGenerator()
        let interesting: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xA2, 0xDC, 0xE2, 0xFF]
        func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C }
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...40, using: &generator)
            let bytes = (0..<count).map { _ in
                Int.random(in: 0..<8, using: &generator) == 0
                    ? interesting.randomElement(using: &generator) ?? 0x41 : UInt8.random(in: 0x20...0x7E, using: &generator)
            }
            let firstEscape = bytes.firstIndex(where: needsEscape) ?? bytes.count
            let plain = bytes.withUnsafeBufferPointer { JSONValue.plainPrefixCount(of: $0) }
            #expect(plain <= firstEscape, "\(bytes)")
            #expect((plain == bytes.count) == (firstEscape == bytes.count), "\(bytes)")
            // Whole ASCII text (the generator's other bytes are not UTF-8 on their own) reads back as itself.
            guard bytes.allSatisfy({ $0 < 0x80 }) else { continue }
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(try JSONValue(parsing: JSONValue.string(text).jsonString) == .string(text), "\(bytes)")
        }
    }

    /// A value's `encodedCapacity` holds its text at the extremes (the longest doubles and integers, strings of
    /// nothing but six-byte escapes, keys and pointer tokens that need escapes), and the text written into that room
    /// is the array writer's, byte for byte.
    @Test func theEncodedCapacityHoldsTheLongestTexts() {
        let worstString = String(decoding: (0..<40).map { UInt8($0 % 0x20) }, as: UTF8.self)
        let values: [JSONValue] = [
            .null, .bool(false), .bool(true), .int(.min), .int(.max), .int(-9), .double(-2.2250738585072014e-308),
            .double(-.greatestFiniteMagnitude), .double(-.leastNonzeroMagnitude), .double(.nan), .string(""),
            .string(worstString), .string("\"\\\"\\"), .array([]), .object([:]),
            .array([.int(.min), .string(worstString), .object([worstString: .double(-1.7976931348623157e+308)])]),
        ]
        for value in values {
            let bounded = BoundedBytes.make(capacity: value.encodedCapacity) { $0.putValue(value) }
            #expect(bounded == value.jsonBytes, "\(value)")
            #expect(bounded.count <= value.encodedCapacity, "\(value)")
        }
        let pointer = JSONPointer(tokens: [worstString, "~/~/", ""])
        let operations: [PatchOperation] = [
            .add(path: pointer, value: .string(worstString)), .remove(path: pointer),
            .replace(path: pointer, value: .int(.min)), .move(from: pointer, path: pointer),
            .copy(from: pointer, path: pointer), .test(path: pointer, value: .null),
        ]
        let patch = JSONPatch(operations)
        let bounded = BoundedBytes.make(capacity: patch.encodedCapacity) { $0.putPatch(patch) }
        #expect(bounded == patch.json.jsonBytes)
        #expect(bounded.count <= patch.encodedCapacity)
        #expect(pointer.encodedCapacity >= JSONValue.string(pointer.description).jsonBytes.count)
    }

    /// `make` writes small room on the stack and copies it out, larger room in its array: on both sides of that
    /// bound (and at it) the array holds exactly the bytes written, and a write that does not fit is left out whole.
    @Test(arguments: [0, 1, BoundedBytes.temporaryRoom - 1, BoundedBytes.temporaryRoom, BoundedBytes.temporaryRoom + 1, 5000])
    func makeGivesExactlyTheBytesWrittenWhateverTheRoom(capacity: Int) {
        let text = (0..<capacity).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let made = BoundedBytes.make(capacity: capacity) { bytes in
            bytes.put(text)
            bytes.put([0x41])  // no room left: not written
        }
        #expect(made == text)
        #expect(made.count == capacity)
        let half = BoundedBytes.make(capacity: capacity) { $0.put(Array(text.prefix(capacity / 2))) }
        #expect(half == Array(text.prefix(capacity / 2)))
    }

    @Test func nonFiniteDoublesEncodeAsNull() {
        #expect(JSONValue.double(.infinity).jsonString == "null")
        #expect(JSONValue.double(-.infinity).jsonString == "null")
        #expect(JSONValue.double(.nan).jsonString == "null")
    }

    @Test func doublesRoundTripExactly() throws {
        var generator = SeededGenerator(seed: 11)
        let specials: [Double] = [0.1, 1.0 / 3.0, Double.leastNormalMagnitude / 3, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -0.0, 1e16, 123456789.125, 2.0]
        for value in specials {
            let text = JSONValue.double(value).jsonString
            let parsed = try JSONValue(parsing: text)
            guard case .double(let back) = parsed else {
                Issue.record("\(value) encoded as \(text), which parsed as \(parsed)")
                continue
            }
            #expect(back.bitPattern == value.bitPattern)
        }
        for _ in 0..<5000 {
            let value = Double(bitPattern: generator.next())
            guard value.isFinite else { continue }
            let parsed = try JSONValue(parsing: JSONValue.double(value).jsonString)
            guard case .double(let back) = parsed else {
                Issue.record("\(value) did not parse back as a double")
                continue
            }
            #expect(back.bitPattern == value.bitPattern)
        }
    }

    @Test func encodingAgreesWithFoundation() throws {
        // Foundation's parser is an independent check that our output is valid JSON.
        let value: JSONValue = ["s": "a\"\\\n\u{01}é😀", "n": [1, -2, 3.25, 1e300], "o": ["k": nil, "t": true]]
        let object = try JSONSerialization.jsonObject(with: Data(value.jsonBytes))
        let dictionary = try #require(object as? [String: Any])
        #expect(dictionary["s"] as? String == "a\"\\\n\u{01}é😀")
        let numbers = try #require(dictionary["n"] as? [Double])
        #expect(numbers == [1, -2, 3.25, 1e300])
    }
}
