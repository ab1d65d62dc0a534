import JSONPatch
import Testing

@Suite("JSON Pointer")
struct JSONPointerTests {
    /// The example document and pointers of RFC 6901 §5.
    static let document: JSONValue = [
        "foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5,
        "k\"l": 6, " ": 7, "m~n": 8,
    ]

    @Test(arguments: [
        ("", JSONValue?.some(JSONPointerTests.document)),
        ("/foo", JSONValue.array(["bar", "baz"])),
        ("/foo/0", "bar"),
        ("/", 0),
        ("/a~1b", 1),
        ("/c%d", 2),
        ("/e^f", 3),
        ("/g|h", 4),
        ("/i\\j", 5),
        ("/k\"l", 6),
        ("/ ", 7),
        ("/m~0n", 8),
        ("/foo/2", nil),
        ("/foo/-", nil),
        ("/foo/01", nil),
        ("/missing", nil),
        ("/foo/0/deeper", nil),
    ])
    func resolvesRFC6901Examples(text: String, expected: JSONValue?) throws {
        let pointer = try JSONPointer(text)
        #expect(Self.document[pointer] == expected)
        #expect(pointer.description == text)
    }

    @Test func unescapesTokensInTheRightOrder() throws {
        #expect(try JSONPointer("/~01").tokens == ["~1"])
        #expect(try JSONPointer("/~10").tokens == ["/0"])
        #expect(try JSONPointer("/a/~0~1/").tokens == ["a", "~/", ""])
        #expect(JSONPointer(tokens: ["~1", "/0"]).description == "/~01/~10")
        #expect(try JSONPointer("").tokens.isEmpty)
        #expect(JSONPointer.root.isRoot)
        #expect(JSONPointer.root.description == "")
    }

    @Test(arguments: [
        ("a", JSONPointerError.Code.missingLeadingSlash),
        ("#/a", .missingLeadingSlash),
        ("/a~", .invalidEscape),
        ("/a~2", .invalidEscape),
        ("/~x", .invalidEscape),
    ])
    func rejectsMalformedPointers(text: String, code: JSONPointerError.Code) {
        #expect { try JSONPointer(text) } throws: { error in
            guard let error = error as? JSONPointerError else { return false }
            return error.code == code && error.pointer == text && !error.description.isEmpty
        }
    }

    @Test func appendingBuildsEscapedPaths() throws {
        let pointer = JSONPointer.root.appending("rows").appending(3).appending("a/b~c")
        #expect(pointer.tokens == ["rows", "3", "a/b~c"])
        #expect(pointer.description == "/rows/3/a~1b~0c")
        #expect(try JSONPointer(pointer.description) == pointer)
        #expect(pointer.parent == JSONPointer.root.appending("rows").appending(3))
        #expect(JSONPointer.root.parent == nil)
    }

    @Test(arguments: [
        ("0", Int?.some(0)), ("7", 7), ("10", 10), ("123456", 123456),
        ("01", nil), ("00", nil), ("-", nil), ("-1", nil), ("+1", nil), ("1e0", nil), ("", nil), (" 1", nil),
        ("99999999999999999999999", nil),
    ])
    func arrayIndexRules(token: String, expected: Int?) {
        #expect(JSONPointer.arrayIndex(token) == expected)
    }

    @Test func properPrefix() throws {
        let a = try JSONPointer("/a")
        #expect(a.isProperPrefix(of: try JSONPointer("/a/b")))
        #expect(!a.isProperPrefix(of: a))
        #expect(!a.isProperPrefix(of: try JSONPointer("/ab")))
        #expect(JSONPointer.root.isProperPrefix(of: a))
    }

    /// Found by the fuzzer: a '/' followed by a combining mark is one grapheme cluster, and escaping by
    /// `Character` left it unescaped, so the text form named another pointer.
    @Test func slashFollowedByACombiningMarkIsEscaped() throws {
        let pointer = JSONPointer(tokens: ["a/\u{073A}b", "~\u{0301}"])
        #expect(pointer.description == "/a~1\u{073A}b/~0\u{0301}")
        #expect(try JSONPointer(pointer.description) == pointer)
    }

    @Test(arguments: [
        [], [""], ["rows", "3", "count"], ["a/b", "c~d", "~1"], ["quote\"back\\slash"], ["tab\tnew\nline\u{1}"],
        ["é✓🚀", "a/\u{073A}b", "~\u{0301}"], ["", "", "x"],
    ])
    func writtenAsAJSONStringItIsTheTextOfItsDescription(tokens: [String]) {
        let pointer = JSONPointer(tokens: tokens)
        var direct: [UInt8] = [1]
        pointer.encodeJSONString(into: &direct)
        var viaText: [UInt8] = [1]
        JSONValue.string(pointer.description).encode(into: &viaText)
        #expect(direct == viaText)
    }

    @Test func integersAndStringsWrittenDirectlyAreTheirValuesText() {
        for number in [0, 7, 10, -1, 1234567, Int.max, Int.min] {
            var direct: [UInt8] = []
            direct.putDecimal(number)
            #expect(direct == JSONValue.int(number).jsonBytes)
        }
        var literal: [UInt8] = [65]
        literal.put(#"{"a":"#)
        #expect(literal == Array(#"A{"a":"#.utf8))
    }
}
