import JSONPatch
import Testing

@testable import MVVMRServer

@Suite struct RequestParsingTests {
    private static let wholeNumber = RequestFieldError(message: "'rev' must be a whole number.")
    private static let negative = RequestFieldError(message: "'rev' must not be negative.")
    private static let badEventID = RequestFieldError(message: "Last-Event-ID must be a non-negative whole number.")

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
        #expect(try RequestParsing.revision(parsed(text)) == revision)
    }

    @Test(arguments: ["0.5", "9007199254740994.0", "1e300", "\"3\"", "true", "[1]", "-9007199254740994.0"])
    func aFractionOrADoubleBeyond2To53IsNotAWholeNumber(text: String) throws {
        let field = try parsed(text)
        #expect(throws: Self.wholeNumber) { try RequestParsing.revision(field) }
    }

    @Test(arguments: ["-1", "-1.0", "-9007199254740992.0"])
    func aNegativeRevisionIsRefusedAsNegative(text: String) throws {
        let field = try parsed(text)
        #expect(throws: Self.negative) { try RequestParsing.revision(field) }
    }

    @Test func anAbsentOrNullRevisionIsNone() throws {
        #expect(try RequestParsing.revision(nil) == nil)
        #expect(try RequestParsing.revision(.null) == nil)
    }

    @Test func anActionBodyGivesItsThreeFields() throws {
        let fields = try RequestParsing.actionFields(of: parsed(#"{"action":"increment","value":{"a":[1]},"rev":2.0}"#))
        #expect(fields == ActionRequestFields(action: "increment", value: ["a": [1]], clientRevision: 2))
        let bare = try RequestParsing.actionFields(of: parsed(#"{"action":"loadMore"}"#))
        #expect(bare == ActionRequestFields(action: "loadMore", value: .null, clientRevision: nil))
    }

    @Test func anActionBodyWithoutAStringActionIsRefused() throws {
        #expect(throws: RequestFieldError(message: "The body must be a JSON object with an 'action'.")) {
            try RequestParsing.actionFields(of: parsed(#"["increment"]"#))
        }
        #expect(throws: RequestFieldError(message: "'action' (a string) is required.")) {
            try RequestParsing.actionFields(of: parsed(#"{"action":3}"#))
        }
    }

    @Test(arguments: [
        ("0", 0), ("17", 17), (" 42\t", 42), ("9223372036854775807", Int.max),
        // Larger than any sequence: ahead of the session, which then sends snapshots (was a 400).
        ("9223372036854775808", Int.max), ("99999999999999999999", Int.max), (String(repeating: "9", count: 400), Int.max),
        ("007", 7),
    ])
    func aDecimalLastEventIDIsThatEventOrAheadOfAll(text: String, identifier: Int) throws {
        #expect(try RequestParsing.lastEventID(text) == identifier)
    }

    @Test(arguments: ["-3", "+5", "1.5", "1e3", "abc", "12 34", " ", "٣", "0x10", "-0"])
    func aLastEventIDThatIsNotDecimalDigitsIsRefused(text: String) {
        #expect(throws: Self.badEventID) { try RequestParsing.lastEventID(text) }
    }

    @Test func anEmptyLastEventIDIsNone() throws {
        #expect(try RequestParsing.lastEventID("") == nil)
    }
}
