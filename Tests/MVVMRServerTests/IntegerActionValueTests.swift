import JSONPatch
import MVVMR
import Testing

/// How a JSON number in a request becomes an `Int` action value (the counters page's `increment` takes one).
@Suite struct IntegerActionValueTests {
    private func parsed(_ text: String) throws -> JSONValue {
        try JSONValue(parsing: Array(text.utf8), maxDepth: 64)
    }

    /// Both ends of Int's range are refused alike for an `int` action value (the counters page's `increment`):
    /// `-9223372036854775809` parses to the double −2^63, which used to read as `Int.min`.
    @Test(arguments: ["9223372036854775808", "-9223372036854775809", "9223372036854775807.0", "-9223372036854775807.0"])
    func anIntegerBeyondIntIsNotAnIntActionValue(text: String) throws {
        let value = try parsed(text)
        #expect(value.intValue == nil)
        #expect(!ActionValueType.int.accepts(value))
        #expect(Int(actionValue: value) == nil)
    }

    @Test(arguments: [
        ("9223372036854775807", Int.max), ("-9223372036854775808", Int.min), ("3.0", 3),
        ("-9223372036854774784.0", -9_223_372_036_854_774_784),  // the whole double next above −2^63
        ("9223372036854774784.0", 9_223_372_036_854_774_784),  // the largest whole double below 2^63
    ])
    func anIntegerWithinIntIsAnIntActionValue(text: String, integer: Int) throws {
        let value = try parsed(text)
        #expect(value.intValue == integer)
        #expect(ActionValueType.int.accepts(value))
        #expect(Int(actionValue: value) == integer)
    }
}
