import Foundation
import JSONPatch
import Testing

@Suite("Parsing")
struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONValue(parsing: #" { "a" : [ 1 , -2.5e1 , "s" , true , false , null , { } , [ ] ] } "#)
        #expect(value == ["a": [1, -25.0, "s", true, false, nil, .object([:]), []]])
    }

    @Test func keepsObjectKeyOrder() throws {
        let value = try JSONValue(parsing: #"{"z":1,"a":2,"m":3}"#)
        #expect(value.objectValue?.keys == ["z", "a", "m"])
        #expect(value.jsonString == #"{"z":1,"a":2,"m":3}"#)
    }

    @Test(arguments: [
        ("0", JSONValue.int(0)),
        ("-0", JSONValue.int(0)),
        ("42", JSONValue.int(42)),
        ("9223372036854775807", JSONValue.int(Int.max)),
        ("-9223372036854775808", JSONValue.int(Int.min)),
        ("1.0", JSONValue.double(1.0)),
        ("1e2", JSONValue.double(100)),
        ("1E+2", JSONValue.double(100)),
        ("-1.5e-3", JSONValue.double(-0.0015)),
    ])
    func parsesNumbers(text: String, expected: JSONValue) throws {
        let value = try JSONValue(parsing: text)
        #expect(value == expected)
        // The case must match too: integers stay integers, anything with '.' or 'e' is a double.
        switch (value, expected) {
        case (.int, .int), (.double, .double): break
        default: Issue.record("\(text) parsed as \(value), expected the case of \(expected)")
        }
    }

    @Test func integersBeyondIntRangeBecomeDoubles() throws {
        #expect(try JSONValue(parsing: "9223372036854775808") == .double(9_223_372_036_854_775_808.0))
        #expect(try JSONValue(parsing: "-9223372036854775809") == .double(-9_223_372_036_854_775_809.0))
        if case .double = try JSONValue(parsing: "123456789012345678901234567890") {} else {
            Issue.record("a 30-digit integer must become a double")
        }
    }

    @Test func integersSurviveRoundTripExactly() throws {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<2000 {
            let integer = Int.random(in: Int.min...Int.max, using: &generator)
            let text = JSONValue.int(integer).jsonString
            #expect(text == String(integer))
            #expect(try JSONValue(parsing: text) == .int(integer))
        }
    }

    @Test func stringEscapesDecode() throws {
        let value = try JSONValue(parsing: #""a\"b\\c\/d\be\ff\ng\rh\ti\u0041\u00e9\u20AC\uD83D\uDE00""#)
        #expect(value == .string("a\"b\\c/d\u{08}e\u{0C}f\ng\rh\tiAé€😀"))
    }

    @Test func rawUTF8IsAccepted() throws {
        #expect(try JSONValue(parsing: "\"héllo €😀\"") == .string("héllo €😀"))
    }

    @Test(arguments: [
        // (input bytes, expected code, expected offset)
        (Array("".utf8), JSONParseError.Code.unexpectedEnd, 0),
        (Array("   ".utf8), .unexpectedEnd, 3),
        (Array("[1,]".utf8), .unexpectedCharacter, 3),
        (Array("[1 2]".utf8), .unexpectedCharacter, 3),
        (Array("{\"a\" 1}".utf8), .unexpectedCharacter, 5),
        (Array("{1:2}".utf8), .unexpectedCharacter, 1),
        (Array("{\"a\":1,}".utf8), .unexpectedCharacter, 7),
        (Array("[1".utf8), .unexpectedEnd, 2),
        (Array("tru".utf8), .unexpectedEnd, 3),
        (Array("nul!".utf8), .unexpectedCharacter, 3),
        (Array("01".utf8), .invalidNumber, 1),
        (Array("-".utf8), .unexpectedEnd, 1),
        (Array("-a".utf8), .invalidNumber, 1),
        (Array("1.".utf8), .unexpectedEnd, 2),
        (Array("1.e3".utf8), .invalidNumber, 2),
        (Array("1e".utf8), .unexpectedEnd, 2),
        (Array("+1".utf8), .unexpectedCharacter, 0),
        (Array("1e999".utf8), .numberOutOfRange, 0),
        (Array("\"abc".utf8), .unexpectedEnd, 4),
        (Array("\"a\\qb\"".utf8), .invalidEscape, 2),
        (Array("\"\\u12G4\"".utf8), .invalidEscape, 5),
        (Array("\"\\uD800\"".utf8), .invalidSurrogate, 1),
        (Array("\"\\uD800\\u0041\"".utf8), .invalidSurrogate, 1),
        (Array("\"\\uDC00\"".utf8), .invalidSurrogate, 1),
        (Array("\"a\u{01}b\"".utf8), .controlCharacter, 2),
        (Array("\"a\nb\"".utf8), .controlCharacter, 2),
        ([0x22, 0xFF, 0x22], .invalidUTF8, 1),
        ([0x22, 0xC0, 0xAF, 0x22], .invalidUTF8, 1),  // overlong '/'
        ([0x22, 0xED, 0xA0, 0x80, 0x22], .invalidUTF8, 2),  // encoded surrogate
        ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], .invalidUTF8, 2),  // above U+10FFFF
        ([0x22, 0xE2, 0x82, 0x22], .invalidUTF8, 3),  // truncated sequence
        ([0x22, 0x80, 0x22], .invalidUTF8, 1),  // lone continuation byte
        (Array("1 2".utf8), .trailingData, 2),
        (Array("{} x".utf8), .trailingData, 3),
        (Array("\u{FEFF}1".utf8), .unexpectedCharacter, 0),
    ])
    func rejectsMalformedTextWithOffset(bytes: [UInt8], code: JSONParseError.Code, offset: Int) {
        do {
            let value = try JSONValue(parsing: bytes)
            Issue.record("expected \(code) but parsed \(value)")
        } catch {
            #expect(error.code == code)
            #expect(error.offset == offset)
            #expect(!error.message.isEmpty)
            #expect(error.description.contains(code.rawValue))
        }
    }

    /// A top-level object of scalars (an action's body) is parsed by a shortcut without the container stacks; the
    /// same object inside an array is parsed by the general path. Over random flat objects, and the same objects
    /// with a byte deleted, changed or inserted, both must agree: the same value, or the same error at the same
    /// place (one byte later inside the array). Errors at the document's end differ in kind (a missing `]`, data
    /// after the top-level value), and so do those of a document no longer beginning with `{`, so there only
    /// failing at all is compared.
    @Test func aFlatObjectParsesAsTheGeneralPathParsesIt() throws {
        var generator = SeededGenerator(seed: 15)
        let scalars = [#""increment""#, #""a\"b\u00e9""#, "1", "-25", "2.5e1", "true", "false", "null", "[1]", #"{"x":2}"#, "[]"]
        let keys = [#""action""#, #""value""#, #""rev""#, #""value""#, #""k\n""#]
        let spaces = ["", " ", "\n\t "]
        var checked = 0
        for _ in 0..<3_000 {
            var text = "{" + spaces.randomElement(using: &generator)!
            for member in 0..<Int.random(in: 0...4, using: &generator) {
                if member > 0 { text += "," + spaces.randomElement(using: &generator)! }
                text += keys.randomElement(using: &generator)! + spaces.randomElement(using: &generator)! + ":"
                text += spaces.randomElement(using: &generator)! + scalars.randomElement(using: &generator)!
            }
            text += spaces.randomElement(using: &generator)! + "}" + spaces.randomElement(using: &generator)!
            var bytes = Array(text.utf8)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: break
            case 1: bytes.remove(at: Int.random(in: 0..<bytes.count, using: &generator))
            case 2: bytes[Int.random(in: 0..<bytes.count, using: &generator)] = Array(#"{}[],:" 1an\"#.utf8).randomElement(using: &generator)!
            default: bytes.insert(Array(#"{}[],:" 1an\"#.utf8).randomElement(using: &generator)!, at: Int.random(in: 0...bytes.count, using: &generator))
            }
            let flat = Result { () throws(JSONParseError) in try JSONValue(parsing: bytes) }
            let wrapped = Result { () throws(JSONParseError) in try JSONValue(parsing: [UInt8(ascii: "[")] + bytes + [UInt8(ascii: "]")]) }
            switch (flat, wrapped) {
            case (.success(let value), .success(let array)):
                #expect(array == .array([value]), "\(String(decoding: bytes, as: UTF8.self))")
            case (.failure(let error), .failure(let arrayError)):
                // Only a document that still begins with `{` can take the shortcut (after `]`, the array would close).
                if bytes.first == UInt8(ascii: "{") && error.offset < bytes.count && error.code != .trailingData {
                    #expect(arrayError.code == error.code && arrayError.offset == error.offset + 1,
                            "\(String(decoding: bytes, as: UTF8.self)): \(error) against \(arrayError)")
                }
            case (.success, .failure(let arrayError)):
                Issue.record("\(String(decoding: bytes, as: UTF8.self)) parsed alone but not in an array: \(arrayError)")
            case (.failure(let error), .success):
                Issue.record("\(String(decoding: bytes, as: UTF8.self)) failed alone (\(error)) but parsed in an array")
            }
            checked += 1
        }
        #expect(checked == 3_000)
    }

    @Test func aFlatObjectKeepsTheFirstPositionAndTheLastValueOfARepeatedKey() throws {
        let value = try JSONValue(parsing: #"{"a":1,"b":2,"a":3}"#)
        #expect(value.objectValue?.keys == ["a", "b"])
        #expect(value == ["a": 3, "b": 2])
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: #"{"a":1}"#, maxDepth: 0) }
    }

    @Test func aMillionOpeningBracketsIsACleanError() {
        let bytes = [UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: bytes) }
        do {
            _ = try JSONValue(parsing: bytes)
        } catch {
            #expect(error.code == .nestingTooDeep)
            #expect(error.offset == JSONValue.defaultMaxDepth)
        }
        let objects = String(repeating: #"{"a":"#, count: 1_000_000)
        #expect { try JSONValue(parsing: objects) } throws: { error in
            (error as? JSONParseError)?.code == .nestingTooDeep
        }
    }

    @Test func nestingLimitIsExact() throws {
        let atLimit = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(throws: Never.self) { try JSONValue(parsing: atLimit) }
        let overLimit = "[" + atLimit + "]"
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: overLimit) }
        #expect(throws: Never.self) { try JSONValue(parsing: overLimit, maxDepth: 513) }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: "[[1]]", maxDepth: 1) }
        #expect(throws: Never.self) { try JSONValue(parsing: "[1]", maxDepth: 1) }
        #expect(throws: Never.self) { try JSONValue(parsing: "1", maxDepth: 0) }
    }

    /// Encoding, comparing, hashing and destroying a value are recursive in its depth; at the
    /// parser's limit they must fit in a small (512 KiB) thread stack.
    @Test func valuesAtMaxDepthWorkOnASmallStack() async throws {
        let text = String(repeating: #"{"k":["#, count: 256) + "1" + String(repeating: "]}", count: 256)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let thread = Thread {
                var ok = false
                if let value = try? JSONValue(parsing: text) {
                    let encoded = value.jsonString
                    let reparsed = try? JSONValue(parsing: encoded)
                    ok = encoded == text && reparsed == value && reparsed?.hashValue == value.hashValue
                    // Diff down to the innermost leaf, then apply the 512-token pointer.
                    let changedText = text.replacing("[1]", with: "[2]")
                    if let changed = try? JSONValue(parsing: changedText) {
                        let patch = JSONPatch.diff(from: value, to: changed)
                        ok = ok && patch.count == 1 && patch.first?.path.tokens.count == 512
                            && (try? patch.apply(to: value)) == changed && value != changed
                    } else {
                        ok = false
                    }
                }
                continuation.resume(returning: ok)
            }
            thread.stackSize = 512 * 1024
            thread.start()
        }
        #expect(result)
    }

    @Test func parsesFromNonContiguousCollections() throws {
        let bytes = Array(#"{"a":[1,2]}"#.utf8)
        let value = try JSONValue(parsing: bytes.lazy.map { $0 })
        #expect(value == ["a": [1, 2]])
        #expect(try JSONValue(parsing: bytes[0...]) == value)
    }

    /// The members `readScalarMembers` hands over, keys as text, or nil when it leaves the text to the whole parse.
    private func scalarMembers(_ text: String) -> [(String, JSONValue)]? {
        var members: [(String, JSONValue)] = []
        let isRead = JSONValue.readScalarMembers(of: Array(text.utf8)) { key, value in
            members.append((String(decoding: key, as: UTF8.self), value))
        }
        return isRead ? members : nil
    }

    @Test(arguments: [
        #"{"action":"increment","value":1}"#, #" {"a":true , "b" : null,"c":-1.5e3,"d":"x"} "#,
        #"{"\u0061ction":"b\u00e9\n","k\"ey":1}"#, #"{"caf\u00e9":"\ud83d\ude00","café":2}"#, #"{"a":1,"a":2}"#,
        #"{"":""}"#,
    ])
    func scalarMembersAreTheParsedObjectsMembersInOrder(text: String) throws {
        let members = try #require(scalarMembers(text))
        var rebuilt = JSONObject()
        for (key, value) in members { rebuilt[key] = value }
        #expect(JSONValue.object(rebuilt) == (try JSONValue(parsing: text)))
        #expect(members.count == text.filter { $0 == ":" }.count)
    }

    @Test(arguments: [
        "{}", "[]", "1", #""a""#, "", " ", #"{"a":[1]}"#, #"{"a":{"b":1}}"#, #"{"a":1"#, #"{"a":1,}"#, #"{"a":1} 2"#,
        #"{"a" 1}"#, #"{a:1}"#, #"{"a":tru}"#, #"{"a\x":1}"#, "{\"a\":\"\u{1}\"}",
    ])
    func anythingButAnObjectOfScalarsIsLeftToTheWholeParse(text: String) {
        #expect(scalarMembers(text) == nil)
    }

    @Test func aKeyIsComparedByItsBytesWhateverTheNamesLength() {
        var seen: [String] = []
        let isRead = JSONValue.readScalarMembers(of: Array(#"{"a":1,"ab":2,"\u0062":3,"b":4}"#.utf8)) { key, _ in
            // A one-letter name may be held as a scalar, not a pointer: `isKey` reads it either way.
            if JSONValue.isKey(key, "a") { seen.append("a") }
            if JSONValue.isKey(key, "ab") { seen.append("ab") }
            if JSONValue.isKey(key, "b") { seen.append("b") }
            if JSONValue.isKey(key, "") { seen.append("empty") }
        }
        #expect(isRead)
        #expect(seen == ["a", "ab", "b", "b"])
    }
}
