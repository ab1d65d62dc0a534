import JSONPatch
import MicroHTTP
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A log line's bytes: the project's bounded writer (one allocation, one bound checked per write), with what a log
/// line writes besides JSON text (its timestamp, its duration, an address).
typealias LineBytes = BoundedBytes

extension BoundedBytes {
    /// The two-digit texts of 0 to 99, back to back: two digits are one lookup.
    private static let digitPairs: StaticString = """
        0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849\
        5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899
        """

    /// Stores `value` (0 to 99, else its last two digits) as two digits at `pointer`.
    private static func storeTwoDigits(_ value: Int, at pointer: UnsafeMutablePointer<UInt8>) {
        let pair = digitPairs.utf8Start + 2 * (abs(value) % 100)
        pointer[0] = pair[0]
        pointer[1] = pair[1]
    }

    /// Writes a duration of `microseconds` in milliseconds with three decimals (`12.345`; a negative one as `0.000`):
    /// to the microsecond, as fine as a request's time means anything.
    mutating func putMilliseconds(microseconds: Int) {
        let microseconds = max(0, microseconds)
        putDecimal(microseconds / 1_000)
        let fraction = microseconds % 1_000
        guard let room = claim(4) else { return }
        room[0] = UInt8(ascii: ".")
        room[1] = UInt8(ascii: "0") + UInt8(fraction / 100)
        Self.storeTwoDigits(fraction % 100, at: room + 2)
    }

    /// The bytes ``putTimestamp(seconds:milliseconds:)`` writes.
    static let timestampCount = 24

    /// Writes the time now as RFC 3339 UTC with milliseconds (`2026-12-01T20:00:00.000Z`).
    mutating func putTimestampNow() {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        putTimestamp(seconds: Int(now.tv_sec), milliseconds: Int(now.tv_nsec / 1_000_000))
    }

    /// The calendar date of the day a line was last written, packed in one word that request threads share without a
    /// lock: the day's number since 1970 (high 32 bits), its year (16), month (8) and day (8). A line written on the
    /// same day (nearly every one) reads it rather than working the calendar out.
    private static let lastDate = Atomic<UInt64>(.max)

    /// The year, month and day of `dayNumber` (days since 1970-01-01, the proleptic Gregorian calendar), from
    /// ``lastDate`` when it is the same day.
    private static func civilDate(dayNumber: Int) -> (year: Int, month: Int, day: Int) {
        let cacheable = dayNumber >= 0 && dayNumber < 1 << 31
        if cacheable {
            let packed = lastDate.load(ordering: .relaxed)
            if Int(packed >> 32) == dayNumber {
                return (Int(packed >> 16 & 0xFFFF), Int(packed >> 8 & 0xFF), Int(packed & 0xFF))
            }
        }
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
        if cacheable && year >= 0 && year <= 9_999 {
            lastDate.store(
                UInt64(dayNumber) << 32 | UInt64(year) << 16 | UInt64(month) << 8 | UInt64(day), ordering: .relaxed)
        }
        return (year, month, day)
    }

    /// Writes a time, `seconds` since 1970 (UTC, up to the year 9999) and `milliseconds` more, as RFC 3339 UTC with
    /// milliseconds, in one write. The calendar date is computed from the day number (the proleptic Gregorian
    /// calendar), with no call to `gmtime_r`, which takes a process-wide lock.
    mutating func putTimestamp(seconds: Int, milliseconds: Int) {
        guard let start = claim(Self.timestampCount) else { return }
        let (days, secondOfDay) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let (dayNumber, second) = secondOfDay < 0 ? (days - 1, secondOfDay + 86_400) : (days, secondOfDay)
        let (year, month, day) = Self.civilDate(dayNumber: dayNumber)
        Self.storeTwoDigits(year / 100, at: start)
        Self.storeTwoDigits(year % 100, at: start + 2)
        start[4] = UInt8(ascii: "-")
        Self.storeTwoDigits(month, at: start + 5)
        start[7] = UInt8(ascii: "-")
        Self.storeTwoDigits(day, at: start + 8)
        start[10] = UInt8(ascii: "T")
        Self.storeTwoDigits(second / 3_600, at: start + 11)
        start[13] = UInt8(ascii: ":")
        Self.storeTwoDigits(second / 60 % 60, at: start + 14)
        start[16] = UInt8(ascii: ":")
        Self.storeTwoDigits(second % 60, at: start + 17)
        start[19] = UInt8(ascii: ".")
        start[20] = UInt8(ascii: "0") + UInt8(milliseconds / 100 % 10)
        Self.storeTwoDigits(milliseconds % 100, at: start + 21)
        start[23] = UInt8(ascii: "Z")
    }

    /// Writes `address` as text.
    mutating func put(_ address: IPAddress) {
        put(atMost: IPAddress.maximumTextCount) { address.writeText(into: $0) }
    }
}
