import Testing

@testable import MVVMRServer

@Suite struct RequestParsingTests {
    private static let badEventID = RequestFieldError(message: "Last-Event-ID must be a non-negative whole number.")

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
