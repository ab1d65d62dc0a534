import JSONPatch
import MVVMRProtocol
import Testing

/// An action request's fields as the server reads them (`400 invalid_request` carries these messages).
@Suite struct ActionRequestTests {
    private static let wholeNumber = WireDecodingError("'rev' must be a whole number.")
    private static let negative = WireDecodingError("'rev' must not be negative.")

    /// Parses JSON text the way the server parses a body, so the numbers are the parser's, not literals'.
    private func parsed(_ text: String) throws -> JSONValue {
        try JSONValue(parsing: Array(text.utf8), maxDepth: 64)
    }

    @Test(arguments: [
        ("2251799813685248.0", 2_251_799_813_685_248),  // 2^51 written as a double: was refused (limit 1e15)
        ("9007199254740992.0", 9_007_199_254_740_992),  // 2^53, the last whole double with no gap below it
        ("-0.0", 0), ("7.0", 7), ("7e0", 7), ("1e15", 1_000_000_000_000_000), ("12", 12),
    ])
    func aWholeDoubleWithin2To53IsTheRevisionItSpells(text: String, revision: Int) throws {
        #expect(try WireActionRequest.revision(parsed(text)) == revision)
    }

    @Test(arguments: ["0.5", "9007199254740994.0", "1e300", "\"3\"", "true", "[1]", "-9007199254740994.0"])
    func aFractionOrADoubleBeyond2To53IsNotAWholeNumber(text: String) throws {
        let field = try parsed(text)
        #expect(throws: Self.wholeNumber) { try WireActionRequest.revision(field) }
    }

    @Test(arguments: ["-1", "-1.0", "-9007199254740992.0"])
    func aNegativeRevisionIsRefusedAsNegative(text: String) throws {
        let field = try parsed(text)
        #expect(throws: Self.negative) { try WireActionRequest.revision(field) }
    }

    @Test func anAbsentOrNullRevisionIsNone() throws {
        #expect(try WireActionRequest.revision(nil) == nil)
        #expect(try WireActionRequest.revision(.null) == nil)
    }

    @Test func anActionBodyGivesItsThreeFields() throws {
        let fields = try WireActionRequest(json: parsed(#"{"action":"increment","value":{"a":[1]},"rev":2.0}"#))
        #expect(fields == WireActionRequest(action: "increment", value: ["a": [1]], rev: 2))
        let bare = try WireActionRequest(json: parsed(#"{"action":"loadMore"}"#))
        #expect(bare == WireActionRequest(action: "loadMore", value: .null, rev: nil))
    }

    @Test func anActionBodyWithoutAStringActionIsRefused() throws {
        #expect(throws: WireDecodingError("The body must be a JSON object with an 'action'.")) {
            try WireActionRequest(json: parsed(#"["increment"]"#))
        }
        #expect(throws: WireDecodingError("'action' (a string) is required.")) {
            try WireActionRequest(json: parsed(#"{"action":3}"#))
        }
    }

    /// What reading a body gave: the request, or the error's message.
    private enum Reading: Equatable {
        case request(WireActionRequest)
        case refused(String)
    }

    /// The body read from its bytes; nil when that reader leaves it to the whole parse.
    private func readFromBytes(_ text: String) -> Reading? {
        do throws(WireDecodingError) {
            return try WireActionRequest(scalarMembersOf: Array(text.utf8)).map(Reading.request)
        } catch {
            return .refused(error.message)
        }
    }

    /// The body parsed whole and read as a JSON value, as the server reads any body.
    private func readParsed(_ text: String) throws -> Reading {
        let body = try parsed(text)
        do throws(WireDecodingError) {
            return .request(try WireActionRequest(json: body))
        } catch {
            return .refused(error.message)
        }
    }

    @Test(arguments: [
        #"{"action":"increment","value":1}"#, #" { "action" : "increment" , "value" : -2.5e1 , "rev" : 3 } "#,
        #"{"action":"loadMore"}"#, #"{"value":1,"action":"a\u00e9\n","rev":null}"#, #"{"action":"a","action":"b"}"#,
        #"{"action":"a","rev":"3"}"#, #"{"action":"a","rev":1.5}"#, #"{"action":"a","rev":-1}"#, #"{"action":3}"#,
        #"{"value":true}"#, #"{"action":"a","other":false,"value":"x"}"#, #"{"action":"a","rev":7.0}"#,
        #"{"action":"a","value":1,"action":4}"#, #"{"\u0061ction":"b\u00e9","valu\u0065":"\n"}"#,
        #"{"acti\u00f3n":"x","action":"y"}"#, #"{"action\u0000":"x"}"#,
    ])
    func aBodyOfScalarsReadFromItsBytesIsWhatTheParsedBodyGives(text: String) throws {
        let fromBytes = try #require(readFromBytes(text))
        #expect(fromBytes == (try readParsed(text)))
    }

    @Test(arguments: [
        #"{"action":"a","value":{"by":2}}"#, #"{"action":"a","value":[1]}"#, "{}", "[]", #""action""#, "",
        "   ", #"{"action":"a""#, #"{"action":"a",}"#, #"{"action":"a"} x"#, #"{"action" "a"}"#, #"{action:"a"}"#,
        "\u{FEFF}{\"action\":\"a\"}",
    ])
    func aBodyThatIsNotAnObjectOfScalarsIsLeftToTheWholeParse(text: String) {
        #expect(readFromBytes(text) == nil)
    }
}
