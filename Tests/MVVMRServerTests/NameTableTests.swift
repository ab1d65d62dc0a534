@testable import MVVMRServer
import Testing

/// The table units and actions are found in by the names requests carry.
@Suite struct NameTableTests {
    /// Names a client could send: short (held inline by `String`), long, not ASCII, empty, and lengths shared.
    private static let names = [
        "counters", "greeting", "counterz", "a-name-longer-than-fifteen-bytes", "a-name-longer-than-fifteen-bytez",
        "caf\u{E9}", "na\u{EF}ve-but-longer-than-fifteen", "", "x", "y",
    ]

    private func table(_ names: [String]) -> NameTable<Int> {
        NameTable(names.enumerated().map { (name: $0.element, value: $0.offset) })
    }

    @Test func everyNameFindsItsOwnValue() {
        let table = table(Self.names)
        for (index, name) in Self.names.enumerated() {
            #expect(table[name] == index, "\(name)")
        }
        #expect(table.count == Self.names.count)
    }

    @Test func aNameItDoesNotHoldFindsNothing() {
        let table = table(Self.names)
        // The same lengths as names it holds, one byte or one letter's case apart, and a name's prefix.
        for absent in ["counterq", "Counters", "a-name-longer-than-fifteen-bytesX", "a-name-longer-than-fifteen-byte",
                       "z", "caf", "cafe", "  "] {
            #expect(table[absent] == nil, "\(absent)")
        }
    }

    @Test func aNameBuiltAtRunTimeFindsTheSameValueAsItsLiteral() {
        let table = table(Self.names)
        // Strings made from bytes and by concatenation have their own storage (the long ones) or the same inline bits.
        let built = String(decoding: Array("a-name-longer-than-".utf8) + Array("fifteen-bytes".utf8), as: UTF8.self)
        #expect(table[built] == 3)
        #expect(table[String(["count", "ers"].joined())] == 0)
        #expect(table[String(Substring("xgreetingx").dropFirst().dropLast())] == 1)
    }

    @Test func aNameFindsWhatADictionaryWouldFindForIt() {
        // `String` compares by canonical equivalence: an accent composed or combined is the same name, in a small
        // table as in a large one (which hashes), as it was when the units were a `Dictionary`.
        let composed = "caf\u{E9}", combined = "cafe\u{301}"
        for table in [table(["counters", composed]), table((0..<40).map { "unit-\($0)" } + [composed])] {
            #expect(table[combined] == table[composed])
            #expect(table[combined] != nil)
            #expect(table["cafe"] == nil)
        }
        // The Kelvin sign is canonically the letter K: three bytes that find a one-byte name.
        let kelvin = table(["J", "K", "L"])
        #expect(kelvin["\u{212A}"] == 1)
    }

    @Test func aNameGivenTwiceKeepsItsFirstValue() {
        let table = NameTable([(name: "increment", value: 1), (name: "reset", value: 2), (name: "increment", value: 3)])
        #expect(table["increment"] == 1)
        #expect(table["reset"] == 2)
        #expect(table.count == 2)
    }

    @Test func aTableLargerThanTheLinearLimitFindsTheSame() {
        let many = (0..<(NameTable<Int>.linearLimit * 3)).map { "unit-\($0)" } + Self.names
        let table = table(many)
        for (index, name) in many.enumerated() {
            #expect(table[name] == index, "\(name)")
        }
        #expect(table["unit-999"] == nil)
        #expect(table["counterq"] == nil)
    }
}
