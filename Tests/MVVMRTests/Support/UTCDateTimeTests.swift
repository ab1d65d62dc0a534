#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import MVVMR
import Testing

// The Foundation-free UTC dates pages use: seconds since 1970 to a calendar date and time of day, and back.

@Suite struct UTCDateTimeTests {
    @Test func theEpoch() {
        let epoch = UTCDateTime(secondsSince1970: 0)
        #expect(epoch.iso8601 == "1970-01-01T00:00:00Z")
        #expect(epoch.date == "1970-01-01")
        #expect(epoch.time == "00:00:00")
        #expect(epoch.description == "1970-01-01T00:00:00Z")
        #expect(epoch.daysSince1970 == 0)
        #expect(epoch.weekday == 4)  // a Thursday
    }

    @Test func anAfternoon() {
        let instant = UTCDateTime(secondsSince1970: 1_796_133_787)
        #expect(instant.iso8601 == "2026-12-01T14:03:07Z")
        #expect((instant.year, instant.month, instant.day) == (2026, 12, 1))
        #expect((instant.hour, instant.minute, instant.second) == (14, 3, 7))
        #expect(instant.weekday == 2)  // a Tuesday
        #expect(UTCDateTime(secondsSince1970: 1_796_169_599).iso8601 == "2026-12-01T23:59:59Z")
        #expect(UTCDateTime(secondsSince1970: 1_796_169_600).iso8601 == "2026-12-02T00:00:00Z")
    }

    @Test func leapYears() {
        #expect(UTCDateTime.isLeapYear(2000))
        #expect(UTCDateTime.isLeapYear(2024))
        #expect(!UTCDateTime.isLeapYear(1900))
        #expect(!UTCDateTime.isLeapYear(2100))
        #expect(!UTCDateTime.isLeapYear(2023))
        #expect(UTCDateTime.isLeapYear(0))
        #expect(UTCDateTime.isLeapYear(-4))
        #expect(!UTCDateTime.isLeapYear(-100))
        #expect(UTCDateTime.daysIn(month: 2, year: 2000) == 29)
        #expect(UTCDateTime.daysIn(month: 2, year: 1900) == 28)
        #expect(UTCDateTime.daysIn(month: 4, year: 2026) == 30)
        #expect(UTCDateTime.daysIn(month: 13, year: 2026) == 0)
        // 2000-02-29 is day 11,016; the days around it.
        #expect(UTCDateTime(secondsSince1970: 11_016 * 86_400).date == "2000-02-29")
        #expect(UTCDateTime(secondsSince1970: 11_015 * 86_400).date == "2000-02-28")
        #expect(UTCDateTime(secondsSince1970: 11_017 * 86_400).date == "2000-03-01")
        #expect(UTCDateTime(secondsSince1970: 11_016 * 86_400).weekday == 2)  // a Tuesday
        // 1900 and 2100 have no February 29: February 28 is followed by March 1.
        #expect(UTCDateTime(year: 2100, month: 2, day: 29) == nil)
        #expect(UTCDateTime(year: 1900, month: 2, day: 29) == nil)
        let february28 = UTCDateTime(year: 2100, month: 2, day: 28)
        #expect(february28.map { UTCDateTime(secondsSince1970: $0.secondsSince1970 + 86_400).date } == "2100-03-01")
        #expect(UTCDateTime(year: 2024, month: 12, day: 31)?.daysSince1970 == 20_088)
        #expect(UTCDateTime(secondsSince1970: 20_088 * 86_400 + 86_399).iso8601 == "2024-12-31T23:59:59Z")
    }

    @Test func beforeNineteenSeventy() {
        #expect(UTCDateTime(secondsSince1970: -1).iso8601 == "1969-12-31T23:59:59Z")
        #expect(UTCDateTime(secondsSince1970: -1).daysSince1970 == -1)
        #expect(UTCDateTime(secondsSince1970: -86_400).iso8601 == "1969-12-31T00:00:00Z")
        #expect(UTCDateTime(secondsSince1970: -86_401).iso8601 == "1969-12-30T23:59:59Z")
        #expect(UTCDateTime(secondsSince1970: -86_400).weekday == 3)  // a Wednesday
        #expect(UTCDateTime(secondsSince1970: -2_208_988_800).iso8601 == "1900-01-01T00:00:00Z")
        #expect(UTCDateTime(secondsSince1970: -2_203_891_200).iso8601 == "1900-03-01T00:00:00Z")
        #expect(UTCDateTime(secondsSince1970: -62_135_596_800).iso8601 == "0001-01-01T00:00:00Z")
        #expect(UTCDateTime(secondsSince1970: -62_135_596_801).iso8601 == "0000-12-31T23:59:59Z")
        #expect(UTCDateTime(secondsSince1970: -62_167_305_600).iso8601 == "-0001-12-31T00:00:00Z")
        #expect(UTCDateTime(secondsSince1970: 253_402_300_800).iso8601 == "10000-01-01T00:00:00Z")
    }

    @Test func everyIntIsAnInstant() {
        let latest = UTCDateTime(secondsSince1970: .max)
        #expect(latest.iso8601 == "292277026596-12-04T15:30:07Z")
        let earliest = UTCDateTime(secondsSince1970: .min)
        #expect(earliest.iso8601 == "-292277022657-01-27T08:29:52Z")
        #expect(earliest < latest)
        #expect(UTCDateTime(year: latest.year, month: 12, day: 4, hour: 15, minute: 30, second: 7) == latest)
        #expect(UTCDateTime(year: latest.year, month: 12, day: 4, hour: 15, minute: 30, second: 8) == nil)
        #expect(UTCDateTime(year: earliest.year, month: 1, day: 27, hour: 8, minute: 29, second: 52) == earliest)
        #expect(UTCDateTime(year: earliest.year, month: 1, day: 27, hour: 8, minute: 29, second: 51) == nil)
        #expect(UTCDateTime(year: .max, month: 1, day: 1) == nil)
        #expect(UTCDateTime(year: .min, month: 1, day: 1) == nil)
    }

    @Test func componentsOutOfRangeAreNoInstant() {
        #expect(UTCDateTime(year: 2026, month: 0, day: 1) == nil)
        #expect(UTCDateTime(year: 2026, month: 13, day: 1) == nil)
        #expect(UTCDateTime(year: 2026, month: 1, day: 0) == nil)
        #expect(UTCDateTime(year: 2026, month: 1, day: 32) == nil)
        #expect(UTCDateTime(year: 2026, month: 4, day: 31) == nil)
        #expect(UTCDateTime(year: 2026, month: 1, day: 1, hour: 24) == nil)
        #expect(UTCDateTime(year: 2026, month: 1, day: 1, minute: 60) == nil)
        #expect(UTCDateTime(year: 2026, month: 1, day: 1, second: 60) == nil)
        #expect(UTCDateTime(year: 2026, month: 1, day: 1, hour: -1) == nil)
        #expect(UTCDateTime(year: 2026, month: 12, day: 1, hour: 14, minute: 3, second: 7)?.secondsSince1970 == 1_796_133_787)
    }

    @Test func parsingTheTwoFormsItWrites() {
        #expect(UTCDateTime(iso8601: "2026-12-01T14:03:07Z")?.secondsSince1970 == 1_796_133_787)
        #expect(UTCDateTime(iso8601: "2026-12-01")?.iso8601 == "2026-12-01T00:00:00Z")
        #expect(UTCDateTime(iso8601: "2000-02-29")?.daysSince1970 == 11_016)
        #expect(UTCDateTime(iso8601: "1969-12-31T23:59:59Z")?.secondsSince1970 == -1)
        #expect(UTCDateTime(iso8601: "0000-01-01")?.year == 0)
        for text in [
            "", "2026", "2026-12", "2026-12-1", "2026-13-01", "2026-02-29", "2026-12-01T14:03:07",
            "2026-12-01T14:03:07+01:00", "2026-12-01T14:03:07.5Z", "2026-12-01 14:03:07Z", " 2026-12-01",
            "2026-12-01T24:00:00Z", "2026-12-01T14:60:00Z", "+026-12-01", "2026/12/01", "２０２６-12-01",
            "2026-12-01t14:03:07z",
        ] {
            #expect(UTCDateTime(iso8601: text) == nil, "\(text)")
        }
        #expect(UTCDateTime(iso8601: "2026-12-01"[...]) != nil)
    }

    @Test func roundTripsAndComparisons() {
        let earlier = UTCDateTime(secondsSince1970: 100)
        let later = UTCDateTime(secondsSince1970: 101)
        #expect(earlier < later)
        #expect(earlier == UTCDateTime(secondsSince1970: 100))
        #expect([later, earlier].sorted() == [earlier, later])
        for seconds in [0, -1, 1, 951_782_400, -62_135_596_800, 4_102_444_800, 1_796_133_787] {
            let instant = UTCDateTime(secondsSince1970: seconds)
            #expect(UTCDateTime(iso8601: instant.iso8601) == instant)
        }
    }

    /// The C library's `gmtime_r` is an independent reckoning of the same calendar.
    @Test func agreesWithTheCLibraryAcrossThirtyThousandYears() {
        var generator = SplitMix(seed: 1970)
        var days = Set<Int>()
        for round in 0..<20_000 {
            let range: Int64 = round % 2 == 0 ? 1_000_000_000_000 : 20_000_000_000
            let seconds = Int(Int64(bitPattern: generator.next()) % range)
            var time = time_t(seconds)
            var parts = tm()
            guard gmtime_r(&time, &parts) != nil else {
                Issue.record("gmtime_r refused \(seconds)")
                continue
            }
            let instant = UTCDateTime(secondsSince1970: seconds)
            let expected = [Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday)]
                + [Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(parts.tm_wday == 0 ? 7 : parts.tm_wday)]
            let actual = [instant.year, instant.month, instant.day, instant.hour, instant.minute, instant.second, instant.weekday]
            #expect(actual == expected, "\(seconds)")
            #expect(
                UTCDateTime(
                    year: instant.year, month: instant.month, day: instant.day, hour: instant.hour, minute: instant.minute,
                    second: instant.second) == instant)
            days.insert(instant.daysSince1970)
        }
        #expect(days.count > 19_000)
    }

    @Test func everyDayOfEightHundredYearsFollowsTheDayBefore() {
        // Each day is the day after the one before, for 800 years from 1600-03-01 (day -135,080) and from -0402-12-22
        // (day -866,000) across year 0.
        for start in [-135_080, -866_000] {
            var previous = UTCDateTime(secondsSince1970: (start - 1) * 86_400)
            for day in start..<(start + 146_097 * 2) {
                let instant = UTCDateTime(secondsSince1970: day * 86_400)
                let next: (Int, Int, Int)
                if previous.day < UTCDateTime.daysIn(month: previous.month, year: previous.year) {
                    next = (previous.year, previous.month, previous.day + 1)
                } else if previous.month < 12 {
                    next = (previous.year, previous.month + 1, 1)
                } else {
                    next = (previous.year + 1, 1, 1)
                }
                if (instant.year, instant.month, instant.day) != next || instant.daysSince1970 != day
                    || UTCDateTime(year: next.0, month: next.1, day: next.2) != instant
                {
                    Issue.record("day \(day) is \(instant.date), after \(previous.date)")
                    return
                }
                previous = instant
            }
        }
    }
}
