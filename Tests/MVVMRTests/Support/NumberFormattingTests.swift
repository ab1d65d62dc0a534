#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import MVVMR
import Testing

// The Foundation-free number formatting pages use: grouped thousands, zero padding, fixed fraction digits.

@Suite struct NumberFormattingTests {
    @Test func groupedThousands() {
        #expect(0.grouped() == "0")
        #expect(7.grouped() == "7")
        #expect(999.grouped() == "999")
        #expect(1_000.grouped() == "1,000")
        #expect(12_345.grouped() == "12,345")
        #expect(123_456.grouped() == "123,456")
        #expect(1_234_567.grouped() == "1,234,567")
        #expect((-1).grouped() == "-1")
        #expect((-999).grouped() == "-999")
        #expect((-1_000).grouped() == "-1,000")
        #expect((-1_234).grouped(separator: " ") == "-1 234")
        #expect(1_234_567.grouped(separator: "'") == "1'234'567")
        #expect(1_234_567.grouped(separator: "") == "1234567")
        #expect(Int.max.grouped() == "9,223,372,036,854,775,807")
        #expect(Int.min.grouped() == "-9,223,372,036,854,775,808")
        #expect(UInt64.max.grouped() == "18,446,744,073,709,551,615")
        #expect(Int8.min.grouped() == "-128")
    }

    @Test func zeroPadded() {
        #expect(7.zeroPadded(digits: 2) == "07")
        #expect(0.zeroPadded(digits: 2) == "00")
        #expect(0.zeroPadded(digits: 0) == "0")
        #expect(123.zeroPadded(digits: 2) == "123")
        #expect(123.zeroPadded(digits: 3) == "123")
        #expect(123.zeroPadded(digits: 5) == "00123")
        #expect((-7).zeroPadded(digits: 3) == "-007")
        #expect((-7).zeroPadded(digits: 1) == "-7")
        #expect(5.zeroPadded(digits: -3) == "5")
        #expect(Int.min.zeroPadded(digits: 20) == "-09223372036854775808")
        #expect(Int.max.zeroPadded(digits: 2) == "9223372036854775807")
    }

    @Test func fixedFractionDigits() {
        #expect(3.14159.fixed(fractionDigits: 2) == "3.14")
        #expect(3.14159.fixed(fractionDigits: 4) == "3.1416")
        #expect(3.0.fixed(fractionDigits: 2) == "3.00")
        #expect(0.0.fixed(fractionDigits: 2) == "0.00")
        #expect(0.5.fixed(fractionDigits: 3) == "0.500")
        #expect(42.0.fixed(fractionDigits: 0) == "42")
        #expect(0.1.fixed(fractionDigits: 1) == "0.1")
        #expect(0.1.fixed(fractionDigits: 20) == "0.10000000000000000555")
        #expect(1.0.fixed(fractionDigits: -2) == "1")
        #expect((-3.14159).fixed(fractionDigits: 2) == "-3.14")
        #expect((-0.75).fixed(fractionDigits: 1) == "-0.8")
        #expect(99.999.fixed(fractionDigits: 2) == "100.00")
        #expect(9.5.fixed(fractionDigits: 0) == "10")
    }

    @Test func exactHalvesRoundAwayFromZero() {
        #expect(0.125.fixed(fractionDigits: 2) == "0.13")
        #expect(0.375.fixed(fractionDigits: 2) == "0.38")
        #expect((-0.125).fixed(fractionDigits: 2) == "-0.13")
        #expect(0.5.fixed(fractionDigits: 0) == "1")
        #expect(1.5.fixed(fractionDigits: 0) == "2")
        #expect(2.5.fixed(fractionDigits: 0) == "3")
        #expect((-2.5).fixed(fractionDigits: 0) == "-3")
        #expect(1_000_000.5.fixed(fractionDigits: 0) == "1000001")
    }

    @Test func valuesRoundAsWhatTheyAreNotAsTheirLiterals() {
        // 2.675 is 2.67499999999999982236431605997495353221893310546875; 1.005 is 1.00499999999999989…;
        // 1.115 is 1.1149999999999999911…; 0.45 is 0.450000000000000011102230246251565404236316680908203125.
        #expect(2.675.fixed(fractionDigits: 2) == "2.67")
        #expect(1.005.fixed(fractionDigits: 2) == "1.00")
        #expect(1.115.fixed(fractionDigits: 2) == "1.11")
        #expect(0.45.fixed(fractionDigits: 1) == "0.5")
        // Multiplying first (267.49999999999997 × 100 rounds to 267.5 as a Double) would say "2.68".
        #expect((2.675 * 100).rounded() == 268)
    }

    @Test func roundingToZeroHasNoMinusSign() {
        #expect((-0.0).fixed(fractionDigits: 2) == "0.00")
        #expect((-0.001).fixed(fractionDigits: 2) == "0.00")
        #expect((-0.4).fixed(fractionDigits: 0) == "0")
        #expect((-0.005).fixed(fractionDigits: 2) == "-0.01")  // -0.005000000000000000104…: past the half
        #expect((-0.5).fixed(fractionDigits: 0) == "-1")
    }

    @Test func bigAndTinyNumbersAreWrittenInFull() {
        #expect(1e20.fixed(fractionDigits: 2) == "100000000000000000000.00")
        #expect(1e22.fixed(fractionDigits: 0) == "10000000000000000000000")
        #expect(1e23.fixed(fractionDigits: 0) == "99999999999999991611392")
        #expect(9_007_199_254_740_993.0.fixed(fractionDigits: 1) == "9007199254740992.0")
        #expect(Double.greatestFiniteMagnitude.fixed(fractionDigits: 0).count == 309)
        #expect(Double.greatestFiniteMagnitude.fixed(fractionDigits: 0).hasPrefix("17976931348623157081452742373"))
        #expect((-Double.greatestFiniteMagnitude).fixed(fractionDigits: 1).hasPrefix("-1797693134862315708"))
        #expect(Double.leastNonzeroMagnitude.fixed(fractionDigits: 3) == "0.000")
        #expect(Double.leastNonzeroMagnitude.fixed(fractionDigits: 324) == "0." + String(repeating: "0", count: 323) + "5")
        #expect(Double.leastNormalMagnitude.fixed(fractionDigits: 310).hasSuffix("00223"))
        // Past the 1,074 digits of a Double's exact value, every digit is a zero.
        let exact = Double.leastNonzeroMagnitude.fixed(fractionDigits: 1_074)
        #expect(exact.hasPrefix("0." + String(repeating: "0", count: 323) + "49406564584124654"))
        #expect(exact.hasSuffix("79242767544565229087538682506419718265533447265625"))
        #expect(Double.leastNonzeroMagnitude.fixed(fractionDigits: 1_080) == exact + "000000")
        #expect(1e-7.fixed(fractionDigits: 7) == "0.0000001")
    }

    @Test func notANumberAndInfinities() {
        #expect(Double.nan.fixed(fractionDigits: 2) == "nan")
        #expect(Double.infinity.fixed(fractionDigits: 2) == "inf")
        #expect((-Double.infinity).fixed(fractionDigits: 2) == "-inf")
    }

    @Test func groupingTheWholePart() {
        #expect(1_234.5.fixed(fractionDigits: 2, groupingSeparator: ",") == "1,234.50")
        #expect((-1_234_567.891).fixed(fractionDigits: 1, groupingSeparator: ",") == "-1,234,567.9")
        #expect(999.999.fixed(fractionDigits: 2, groupingSeparator: ",") == "1,000.00")
        #expect(12.0.fixed(fractionDigits: 0, groupingSeparator: " ") == "12")
        #expect(0.25.fixed(fractionDigits: 2, groupingSeparator: ",") == "0.25")
    }

    /// The C library's `%.*f` writes a Double's exact decimal value (glibc does, to any precision), rounding exact
    /// halves to even: the same as `fixed` but for those, which are told apart by the exact value's digits.
    @Test func agreesWithTheExactDecimalValueOnManyNumbers() {
        var generator = SplitMix(seed: 0x5EED)
        var ties = 0
        for round in 0..<3_000 {
            let value: Double
            switch round % 4 {
            case 0: value = Double(Int64(bitPattern: generator.next()) % 2_000_000) / 1_000  // ±2000.000: many ties
            case 1: value = Double(Int64(bitPattern: generator.next()) % 100_000) / 8  // eighths: exact halves
            case 2:  // any significand, magnitudes from 2^-60 to 2^60, either sign
                let exponent = UInt64(0x3FF - 60) + generator.next() % 120
                value = Double(bitPattern: generator.next() & 0x800F_FFFF_FFFF_FFFF | exponent << 52)
            default: value = (Double(generator.next() % 1_000_000_000) / 1e9 - 0.5) * 1e6
            }
            guard value.isFinite else { continue }
            let digits = Int(generator.next() % 7)
            let expected = Self.printed(value, digits: digits)
            let exact = Self.printed(value, digits: 1_100)
            let actual = value.fixed(fractionDigits: digits)
            if expected != actual {
                // Only an exact half may differ: `%f` rounds it to even, `fixed` away from zero.
                let fraction = exact.split(separator: ".").last ?? ""
                let rest = fraction.dropFirst(digits)
                let isTie = rest.first == "5" && rest.dropFirst().allSatisfy { $0 == "0" }
                #expect(isTie, "\(exact): %f says \(expected), fixed says \(actual)")
                ties += 1
            }
        }
        #expect(ties > 10)
    }

    /// `value` as `snprintf("%.*f")` writes it (no minus sign for a result of zero, as `fixed` writes it).
    static func printed(_ value: Double, digits: Int) -> String {
        var buffer = [CChar](repeating: 0, count: 2_000)
        let count = withVaList([Int32(digits), value]) { vsnprintf(&buffer, buffer.count, "%.*f", $0) }
        let text = String(decoding: buffer.prefix(Int(count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("-"), text.dropFirst().allSatisfy({ $0 == "0" || $0 == "." }) { return String(text.dropFirst()) }
        return text
    }
}

/// A small deterministic generator for the tests' numbers.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
