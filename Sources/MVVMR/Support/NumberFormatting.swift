// Number formatting for pages, with the standard library alone (no `String(format:)`, no `NumberFormatter`): the
// same text for the same value on every machine and every replay, with no locale.

extension BinaryInteger {
    /// The number in decimal with its digits grouped by thousands: `1234567.grouped()` is `"1,234,567"`,
    /// `(-1234).grouped(separator: " ")` is `"-1 234"`. Every value, `Int.min` too.
    /// - Parameter separator: what goes between groups of three digits; `","` by default.
    public func grouped(separator: String = ",") -> String {
        let text = String(self)
        let isNegative = text.hasPrefix("-")
        let digits = isNegative ? text.dropFirst() : text[...]
        return (isNegative ? "-" : "") + Self.group(digits, separator: separator)
    }

    /// The number in decimal with at least `digits` digits, zeros in front; a minus sign goes before the zeros
    /// and does not count: `7.zeroPadded(digits: 2)` is `"07"`, `(-7).zeroPadded(digits: 3)` is `"-007"`,
    /// `123.zeroPadded(digits: 2)` is `"123"`.
    /// - Parameter digits: the fewest digits to write.
    public func zeroPadded(digits: Int) -> String {
        let text = String(self)
        let isNegative = text.hasPrefix("-")
        let magnitude = isNegative ? text.dropFirst() : text[...]
        let zeros = String(repeating: "0", count: Swift.max(0, digits - magnitude.count))
        return (isNegative ? "-" : "") + zeros + magnitude
    }

    /// `digits` (decimal digits, no sign) with `separator` between groups of three, from the right.
    static func group(_ digits: Substring, separator: String) -> String {
        var result = ""
        var index = digits.startIndex
        var count = digits.count
        while index < digits.endIndex {
            let take = count % 3 == 0 ? 3 : count % 3
            let end = digits.index(index, offsetBy: take)
            if !result.isEmpty { result += separator }
            result += digits[index..<end]
            count -= take
            index = end
        }
        return result
    }
}

extension Double {
    /// The number in decimal with exactly `fractionDigits` digits after the point, rounded from the number's
    /// exact binary value, halves away from zero: `3.14159.fixed(fractionDigits: 2)` is `"3.14"`,
    /// `0.125.fixed(fractionDigits: 2)` is `"0.13"` and `(-2.5).fixed(fractionDigits: 0)` is `"-3"`. A number
    /// that is not exactly what its literal says rounds as what it is: `2.675` is 2.67499999…, so it gives
    /// `"2.67"`.
    ///
    /// A result that rounds to zero has no minus sign (`(-0.001).fixed(fractionDigits: 2)` is `"0.00"`). Any
    /// magnitude is written in full, without an exponent (`1e20` is `"100000000000000000000.00"` with 2 digits).
    /// NaN is `"nan"`, the infinities `"inf"` and `"-inf"`.
    /// - Parameters:
    ///   - fractionDigits: how many digits after the point; 0 (or less) writes no point.
    ///   - groupingSeparator: what goes between groups of three digits of the whole part (`","` for
    ///     `"1,234.50"`); nil, the default, for none.
    public func fixed(fractionDigits: Int, groupingSeparator: String? = nil) -> String {
        if isNaN { return "nan" }
        if isInfinite { return self < 0 ? "-inf" : "inf" }
        let digits = Swift.max(0, fractionDigits)
        // A Double's exact value has at most 1,074 digits after the point: any further digit is a zero.
        let exactDigits = Swift.min(digits, 1_074)
        let exponentBits = Int((bitPattern >> 52) & 0x7FF)
        let fraction = bitPattern & 0x000F_FFFF_FFFF_FFFF
        // The magnitude is significand × 2^exponent.
        let significand = exponentBits == 0 ? fraction : fraction | (1 << 52)
        let exponent = exponentBits == 0 ? -1_074 : exponentBits - 1_075
        var scaled = Natural(significand)
        var remaining = exactDigits
        while remaining > 0 {
            let step = Swift.min(remaining, 9)
            scaled.multiply(by: Natural.powersOfTen[step])
            remaining -= step
        }
        if exponent >= 0 {
            scaled.shiftLeft(by: exponent)
        } else if scaled.shiftRight(by: -exponent) {
            scaled.increment()
        }
        var decimal = scaled.decimalDigits
        if decimal.count <= exactDigits {
            decimal = String(repeating: "0", count: exactDigits + 1 - decimal.count) + decimal
        }
        let point = decimal.index(decimal.endIndex, offsetBy: -exactDigits)
        var whole = String(decimal[..<point])
        if let groupingSeparator { whole = Int.group(whole[...], separator: groupingSeparator) }
        let sign = sign == .minus && !scaled.isZero ? "-" : ""
        guard digits > 0 else { return sign + whole }
        return sign + whole + "." + decimal[point...] + String(repeating: "0", count: digits - exactDigits)
    }
}

/// A natural number of any size, as 32-bit limbs, least significant first: the arithmetic
/// ``Swift/Double/fixed(fractionDigits:groupingSeparator:)`` needs to write a Double's exact value in decimal.
struct Natural {
    /// 10^0 … 10^9.
    static let powersOfTen: [UInt32] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000]

    /// The limbs; no zero limb at the top (zero has none).
    private(set) var limbs: [UInt32]

    /// The number `value`.
    init(_ value: UInt64) {
        limbs = [UInt32(truncatingIfNeeded: value), UInt32(truncatingIfNeeded: value >> 32)]
        trim()
    }

    /// Whether the number is zero.
    var isZero: Bool { limbs.isEmpty }

    private mutating func trim() {
        while limbs.last == 0 { limbs.removeLast() }
    }

    /// Multiplies the number by `factor`.
    mutating func multiply(by factor: UInt32) {
        var carry: UInt64 = 0
        for index in limbs.indices {
            let product = UInt64(limbs[index]) * UInt64(factor) + carry
            limbs[index] = UInt32(truncatingIfNeeded: product)
            carry = product >> 32
        }
        if carry > 0 { limbs.append(UInt32(carry)) }
        trim()
    }

    /// Multiplies the number by 2^`bits`.
    mutating func shiftLeft(by bits: Int) {
        guard !isZero, bits > 0 else { return }
        let bitShift = bits % 32
        var shifted = [UInt32](repeating: 0, count: bits / 32)
        if bitShift == 0 {
            shifted += limbs
        } else {
            var carry: UInt32 = 0
            for limb in limbs {
                shifted.append(limb << UInt32(bitShift) | carry)
                carry = limb >> UInt32(32 - bitShift)
            }
            if carry > 0 { shifted.append(carry) }
        }
        limbs = shifted
    }

    /// Divides the number by 2^`bits`, dropping the remainder, and says whether the remainder was at least half
    /// of 2^`bits` (its highest bit set).
    mutating func shiftRight(by bits: Int) -> Bool {
        guard bits > 0 else { return false }
        let halfBit = bits - 1
        let halfLimb = halfBit / 32
        let half = halfLimb < limbs.count && limbs[halfLimb] >> UInt32(halfBit % 32) & 1 == 1
        let limbShift = bits / 32
        guard limbShift < limbs.count else {
            limbs = []
            return half
        }
        let bitShift = bits % 32
        var shifted: [UInt32] = []
        shifted.reserveCapacity(limbs.count - limbShift)
        for index in limbShift..<limbs.count {
            var limb = limbs[index] >> UInt32(bitShift)
            if bitShift > 0, index + 1 < limbs.count { limb |= limbs[index + 1] << UInt32(32 - bitShift) }
            shifted.append(limb)
        }
        limbs = shifted
        trim()
        return half
    }

    /// Adds one.
    mutating func increment() {
        for index in limbs.indices {
            if limbs[index] == .max {
                limbs[index] = 0
            } else {
                limbs[index] += 1
                return
            }
        }
        limbs.append(1)
    }

    /// The number in decimal, with no leading zero (`"0"` for zero).
    var decimalDigits: String {
        guard !isZero else { return "0" }
        var remaining = limbs
        var chunks: [UInt32] = []  // base 10^9, least significant first
        while !remaining.isEmpty {
            var remainder: UInt64 = 0
            for index in remaining.indices.reversed() {
                let current = remainder << 32 | UInt64(remaining[index])
                remaining[index] = UInt32(current / 1_000_000_000)
                remainder = current % 1_000_000_000
            }
            chunks.append(UInt32(remainder))
            while remaining.last == 0 { remaining.removeLast() }
        }
        var text = String(chunks.last ?? 0)
        for chunk in chunks.dropLast().reversed() { text += chunk.zeroPadded(digits: 9) }
        return text
    }
}
