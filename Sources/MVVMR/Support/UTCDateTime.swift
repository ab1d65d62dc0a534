/// An instant as a UTC calendar date and time of day, from whole seconds since 1970-01-01 00:00:00 UTC, with the
/// standard library alone (no `Date`, no `Calendar`, no time zone): the proleptic Gregorian calendar, every day
/// 86,400 seconds (no leap seconds), as ISO 8601 and Unix time count.
///
/// A page takes its time from the session (`context.scheduler.secondsSince1970`, kept in the session's log), never
/// from the system clock, and formats it with this:
///
/// ```swift
/// let now = UTCDateTime(secondsSince1970: context.scheduler.secondsSince1970)
/// now.iso8601   // "2026-12-01T14:03:07Z"
/// now.date      // "2026-12-01"
/// now.time      // "14:03:07"
/// ```
///
/// Every `Int` is an instant: before 1970 too (negative seconds), and years before 1 or after 9999 (written with
/// a minus sign, or more than four digits: year 0 is 1 BC).
public struct UTCDateTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The instant, in whole seconds since 1970-01-01 00:00:00 UTC (negative before).
    public let secondsSince1970: Int
    /// The year; 0 is 1 BC, -1 is 2 BC.
    public let year: Int
    /// The month, 1 (January) to 12.
    public let month: Int
    /// The day of the month, 1 to 31.
    public let day: Int
    /// The hour, 0 to 23.
    public let hour: Int
    /// The minute, 0 to 59.
    public let minute: Int
    /// The second, 0 to 59.
    public let second: Int

    /// The instant `secondsSince1970` seconds after 1970-01-01 00:00:00 UTC (before it when negative).
    /// - Parameter secondsSince1970: whole seconds since 1970, as `context.scheduler.secondsSince1970` gives.
    public init(secondsSince1970: Int) {
        self.secondsSince1970 = secondsSince1970
        // Floor division, so that an instant before 1970 falls on the day it is in: -1 is 1969-12-31 23:59:59.
        var days = secondsSince1970 / 86_400
        var secondOfDay = secondsSince1970 % 86_400
        if secondOfDay < 0 {
            days -= 1
            secondOfDay += 86_400
        }
        (year, month, day) = Self.civil(fromDays: days)
        hour = secondOfDay / 3_600
        minute = secondOfDay / 60 % 60
        second = secondOfDay % 60
    }

    /// The instant of a UTC date and time; nil when a component is out of range (month 13, February 30, hour 24,
    /// second 60) or the instant is beyond `Int` seconds.
    /// - Parameters:
    ///   - year: the year (0 is 1 BC).
    ///   - month: 1 to 12.
    ///   - day: 1 to the month's last day.
    ///   - hour: 0 to 23.
    ///   - minute: 0 to 59.
    ///   - second: 0 to 59.
    public init?(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        // Beyond half of `Int` either way, the instant is beyond `Int` seconds anyway.
        guard year > Int.min / 2, year < Int.max / 2, (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second),
            let days = Self.days(fromCivil: year, month, day)
        else { return nil }
        // Before 1970, counted back from the next midnight: the first day of `Int` seconds starts before `Int.min`.
        let secondOfDay = hour * 3_600 + minute * 60 + second
        let (daySeconds, overflow) = (days < 0 ? days + 1 : days).multipliedReportingOverflow(by: 86_400)
        let (instant, overflowAgain) = daySeconds.addingReportingOverflow(days < 0 ? secondOfDay - 86_400 : secondOfDay)
        guard !overflow, !overflowAgain else { return nil }
        self.init(secondsSince1970: instant)
    }

    /// The instant an ISO 8601 text names, in one of the two forms this type writes: a date, `2026-12-01`
    /// (its midnight, UTC), or a UTC date and time, `2026-12-01T14:03:07Z`; nil for anything else (other forms,
    /// time zones, fractions of seconds, a date that does not exist, spaces around it).
    /// - Parameter text: the text, as a client sends it.
    public init?(iso8601 text: some StringProtocol) {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func byte(_ index: Int, is character: Unicode.Scalar) -> Bool {
            index < bytes.count && bytes[index] == UInt8(ascii: character)
        }
        guard bytes.count == 10 || bytes.count == 20, let year = number(0..<4), byte(4, is: "-"),
            let month = number(5..<7), byte(7, is: "-"), let day = number(8..<10)
        else { return nil }
        guard bytes.count == 20 else {
            self.init(year: year, month: month, day: day)
            return
        }
        guard byte(10, is: "T"), let hour = number(11..<13), byte(13, is: ":"), let minute = number(14..<16),
            byte(16, is: ":"), let second = number(17..<19), byte(19, is: "Z")
        else { return nil }
        self.init(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// The date, `YYYY-MM-DD`: `"2026-12-01"` (years below 1000 with zeros in front, negative ones with a minus
    /// sign: `"-0001-12-31"`).
    public var date: String {
        "\(year.zeroPadded(digits: 4))-\(month.zeroPadded(digits: 2))-\(day.zeroPadded(digits: 2))"
    }

    /// The time of day, `HH:MM:SS`: `"14:03:07"`.
    public var time: String {
        "\(hour.zeroPadded(digits: 2)):\(minute.zeroPadded(digits: 2)):\(second.zeroPadded(digits: 2))"
    }

    /// The date and time in ISO 8601, UTC: `"2026-12-01T14:03:07Z"`.
    public var iso8601: String { date + "T" + time + "Z" }

    /// ``iso8601``.
    public var description: String { iso8601 }

    /// The days since 1970-01-01 (negative before), the day of the instant.
    public var daysSince1970: Int {
        let days = secondsSince1970 / 86_400
        return secondsSince1970 % 86_400 < 0 ? days - 1 : days
    }

    /// The day of the week, ISO 8601's way: 1 is Monday, 7 is Sunday.
    public var weekday: Int {
        // 1970-01-01 was a Thursday (4).
        let offset = (daysSince1970 % 7 + 7 + 3) % 7
        return offset + 1
    }

    /// Whether `left` is before `right`.
    public static func < (left: UTCDateTime, right: UTCDateTime) -> Bool {
        left.secondsSince1970 < right.secondsSince1970
    }

    /// Whether `year` is a leap year of the Gregorian calendar (every 4th, but not every 100th, but every 400th).
    /// - Parameter year: the year (0 is 1 BC, a leap year).
    public static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    /// The number of days in `month` of `year`: 28 to 31; 0 for a month outside 1...12.
    /// - Parameters:
    ///   - month: 1 to 12.
    ///   - year: the year.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 1, 3, 5, 7, 8, 10, 12: 31
        case 4, 6, 9, 11: 30
        case 2: isLeapYear(year) ? 29 : 28
        default: 0
        }
    }

    /// The date of the day `days` after 1970-01-01: Howard Hinnant's `civil_from_days`, in eras of 400 years
    /// (146,097 days) counted from 0000-03-01, so that a leap day is the last day of its year. Exact for every
    /// day of an `Int` count of seconds.
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        // Days since 0000-03-01; no overflow, since `days` comes from `Int` seconds (at most Int.max / 86,400).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097  // 0...146_096
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365  // 0...399
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // 0...365, from March 1
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // 0...11, March is 0
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    /// The days from 1970-01-01 to a date: `days_from_civil`, the inverse of ``civil(fromDays:)``; nil when the
    /// count is beyond `Int`. `year` is within half of `Int` either way.
    static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int? {
        let marchYear = month <= 2 ? year - 1 : year
        let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfEra = marchYear - era * 400  // 0...399
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1  // 0...365
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear  // 0...146_096
        let (eraDays, overflow) = era.multipliedReportingOverflow(by: 146_097)
        guard !overflow else { return nil }
        let (days, overflowAgain) = eraDays.addingReportingOverflow(dayOfEra - 719_468)
        return overflowAgain ? nil : days
    }
}
