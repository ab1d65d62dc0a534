import JSONPatch
import MicroHTTP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A log line's bytes, written through a pointer into room its encoder sized beforehand: an encoder that knows the
/// most bytes it may write makes one allocation and checks one bound per write, where appending to an array checks
/// its capacity and its uniqueness at every byte. A write that would not fit is left out (the line is then cut short,
/// which a correctly sized line never is).
struct LineBytes {
    private let base: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    /// How many bytes are written.
    private(set) var count = 0

    private init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// The bytes `write` writes into room for `capacity` of them.
    static func make(capacity: Int, _ write: (inout LineBytes) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            guard let base = buffer.baseAddress else {
                initialized = 0
                return
            }
            var bytes = LineBytes(base: base, capacity: buffer.count)
            write(&bytes)
            initialized = bytes.count
        }
    }

    /// Writes one byte.
    mutating func put(_ byte: UInt8) {
        guard count < capacity else { return }
        base[count] = byte
        count += 1
    }

    /// Writes a literal's UTF-8.
    mutating func put(_ literal: StaticString) {
        literal.withUTF8Buffer { put($0) }
    }

    /// Writes `bytes`.
    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, count + bytes.count <= capacity else { return }
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// The most bytes ``putEscaped(_:)`` writes for `text`: six for each of its bytes (`\u0001`).
    static func escapedCapacity(_ text: String) -> Int { 6 * text.utf8.count }

    /// Writes `text` escaped as the inside of a JSON string (no quotes).
    mutating func putEscaped(_ text: String) {
        let handled: Void? = text.utf8.withContiguousStorageIfAvailable { putEscaped($0) }
        if handled == nil { Array(text.utf8).withUnsafeBufferPointer { putEscaped($0) } }
    }

    /// Writes UTF-8 `bytes` escaped as the inside of a JSON string (no quotes), as every JSON string of the project
    /// is (``JSONValue/forEachEscapedPiece(of:_:)``).
    mutating func putEscaped(_ bytes: UnsafeBufferPointer<UInt8>) {
        JSONValue.forEachEscapedPiece(of: bytes) { put($0) }
    }

    /// Writes `value` in decimal (at most 20 bytes).
    mutating func putDecimal(_ value: Int) {
        if value < 0 { put(UInt8(ascii: "-")) }
        var rest = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            put(UnsafeBufferPointer(rebasing: buffer.bindMemory(to: UInt8.self)[start...]))
        }
    }

    /// Writes `value` (0 to 99, else its last two digits) as two digits.
    mutating func putTwoDigits(_ value: Int) {
        let value = abs(value) % 100
        put(UInt8(ascii: "0") + UInt8(value / 10))
        put(UInt8(ascii: "0") + UInt8(value % 10))
    }

    /// Writes `duration` in milliseconds with three decimals (`12.345`; a negative one as `0.000`): to the
    /// microsecond, as fine as a request's time means anything.
    mutating func putMilliseconds(_ duration: Duration) {
        let components = duration.components
        let microseconds = max(0, Int(components.seconds) * 1_000_000 + Int(components.attoseconds / 1_000_000_000_000))
        putDecimal(microseconds / 1_000)
        put(UInt8(ascii: "."))
        let fraction = microseconds % 1_000
        put(UInt8(ascii: "0") + UInt8(fraction / 100))
        putTwoDigits(fraction % 100)
    }

    /// The bytes ``putTimestamp(seconds:milliseconds:)`` writes.
    static let timestampCount = 24

    /// Writes the time now as RFC 3339 UTC with milliseconds (`2026-12-01T20:00:00.000Z`).
    mutating func putTimestampNow() {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        putTimestamp(seconds: Int(now.tv_sec), milliseconds: Int(now.tv_nsec / 1_000_000))
    }

    /// Writes a time, `seconds` since 1970 (UTC, up to the year 9999) and `milliseconds` more, as RFC 3339 UTC with
    /// milliseconds. The calendar date is computed from the day number (the proleptic Gregorian calendar), with no
    /// call to `gmtime_r`, which takes a process-wide lock.
    mutating func putTimestamp(seconds: Int, milliseconds: Int) {
        let (days, secondOfDay) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let (dayNumber, second) = secondOfDay < 0 ? (days - 1, secondOfDay + 86_400) : (days, secondOfDay)
        // Days since 0000-03-01, in 400-year eras of 146,097 days (a year here starts in March, so that the leap day
        // ends it).
        let shifted = dayNumber + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        putTwoDigits(year / 100)
        putTwoDigits(year % 100)
        put(UInt8(ascii: "-"))
        putTwoDigits(month)
        put(UInt8(ascii: "-"))
        putTwoDigits(day)
        put(UInt8(ascii: "T"))
        putTwoDigits(second / 3_600)
        put(UInt8(ascii: ":"))
        putTwoDigits(second / 60 % 60)
        put(UInt8(ascii: ":"))
        putTwoDigits(second % 60)
        put(UInt8(ascii: "."))
        put(UInt8(ascii: "0") + UInt8(milliseconds / 100 % 10))
        putTwoDigits(milliseconds % 100)
        put(UInt8(ascii: "Z"))
    }

    /// Writes `address` as text.
    mutating func put(_ address: IPAddress) {
        guard count + IPAddress.maximumTextCount <= capacity else { return }
        count += address.writeText(into: UnsafeMutableBufferPointer(start: base + count, count: IPAddress.maximumTextCount))
    }
}
