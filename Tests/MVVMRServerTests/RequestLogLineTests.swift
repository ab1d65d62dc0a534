import Foundation
import JSONPatch
import MicroHTTP
import Testing

@testable import MVVMRServer

/// The request log's line, written straight to bytes: the same fields, in the same order, as a line made from a field
/// list, escaped where it must be, and a timestamp that agrees with the C library's calendar.
@Suite struct RequestLogLineTests {
    private static func fields(
        path: String = "/api/pages/greeting", address: RequestLogFields.Address = .peer(IPAddress("127.0.0.1") ?? .unknown),
        session: String? = "AbCdEf0123456789xyz", microseconds: Int = 1_234
    ) -> RequestLogFields {
        RequestLogFields(
            method: "GET", path: path, status: 200, microseconds: microseconds, address: address, session: session)
    }

    /// The line's members, in order, parsed back.
    private static func members(_ line: [UInt8]) throws -> [(String, JSONValue)] {
        #expect(line.last == 10)
        #expect(line.dropLast().contains(10) == false)
        guard case .object(let object) = try JSONValue(parsing: Array(line.dropLast())) else {
            Issue.record("not an object")
            return []
        }
        return object.map { ($0.key, $0.value) }
    }

    @Test func aRequestLineHasTheFieldsOfTheGeneralLineInTheSameOrder() throws {
        let line = Logger.requestLine(.info, Self.fields())
        let members = try Self.members(line)
        #expect(members.map(\.0) == ["time", "level", "message", "method", "path", "status", "duration_ms", "ip", "session"])
        let byName = Dictionary(members, uniquingKeysWith: { first, _ in first })
        #expect(byName["level"] == "info")
        #expect(byName["message"] == "request")
        #expect(byName["method"] == "GET")
        #expect(byName["path"] == "/api/pages/greeting")
        #expect(byName["status"] == 200)
        #expect(byName["duration_ms"]?.doubleValue == 1.234)
        #expect(byName["ip"] == "127.0.0.1")
        #expect(byName["session"]?.stringValue == SessionIdentifier.redacted("AbCdEf0123456789xyz"))
        // The general line, for the same fields, says the same (but for the time and the duration's digits).
        let general = try Self.members(
            Logger.line(
                .info, "request",
                [
                    ("method", "GET"), ("path", "/api/pages/greeting"), ("status", 200), ("duration_ms", 1.234),
                    ("ip", "127.0.0.1"), ("session", .string(SessionIdentifier.redacted("AbCdEf0123456789xyz"))),
                ]))
        #expect(general.map(\.0) == members.map(\.0))
        #expect(general.dropFirst().map(\.1) == members.dropFirst().map(\.1))
    }

    @Test func aRequestWithoutASessionHasNoSessionMember() throws {
        let members = try Self.members(Logger.requestLine(.warning, Self.fields(session: nil)))
        #expect(members.map(\.0) == ["time", "level", "message", "method", "path", "status", "duration_ms", "ip"])
        #expect(members[1].1 == "warning")
    }

    @Test(arguments: [
        "/a\"b\\c", "/tab\there", "/\u{1}control", "/é/ü/日本", "/" + String(repeating: "long", count: 200),
    ])
    func pathsAreEscapedAsJSON(path: String) throws {
        let members = try Self.members(Logger.requestLine(.info, Self.fields(path: path)))
        #expect(members.first { $0.0 == "path" }?.1.stringValue == path)
    }

    @Test(arguments: ["ab\"c\\def", "日本語のセッション", "a\u{301}bcdefgh", "abc", "", "\u{1}\u{2}abcdef"])
    func anySessionIdIsRedactedAsTheGeneralRuleSays(identifier: String) throws {
        let members = try Self.members(Logger.requestLine(.info, Self.fields(session: identifier)))
        #expect(members.first { $0.0 == "session" }?.1.stringValue == SessionIdentifier.redacted(identifier))
    }

    @Test func aForwardedAddressIsWrittenAsTheProxyNamedIt() throws {
        let members = try Self.members(Logger.requestLine(.info, Self.fields(address: .forwarded("203.0.113.9"))))
        #expect(members.first { $0.0 == "ip" }?.1 == "203.0.113.9")
        let odd = try Self.members(Logger.requestLine(.info, Self.fields(address: .forwarded("x\"y"))))
        #expect(odd.first { $0.0 == "ip" }?.1 == "x\"y")
        let v6 = try Self.members(Logger.requestLine(.info, Self.fields(address: .peer(IPAddress("::1") ?? .unknown))))
        #expect(v6.first { $0.0 == "ip" }?.1 == "::1")
    }

    @Test(arguments: [
        (0, "0.000"), (1, "0.001"), (10, "0.010"), (999, "0.999"), (1_500, "1.500"), (12_345_678, "12345.678"),
        (3_000_000, "3000.000"), (-1_000_000, "0.000"),
    ])
    func durationsAreMillisecondsWithThreeDecimals(microseconds: Int, text: String) {
        let bytes = LineBytes.make(capacity: 32) { $0.putMilliseconds(microseconds: microseconds) }
        #expect(String(decoding: bytes, as: UTF8.self) == text)
    }

    @Test func aWriteThatDoesNotFitIsLeftOutWhole() {
        let bytes = LineBytes.make(capacity: 5) { line in
            line.put("abc")
            line.put("defg")
            line.put(UInt8(ascii: "h"))
            // A timestamp is one write of 24 bytes: left out whole.
            line.putTimestamp(seconds: 0, milliseconds: 0)
            // An escape sequence is one write: left out whole too, never half written.
            line.putEscaped("\"")
        }
        #expect(String(decoding: bytes, as: UTF8.self) == "abch")
    }

    @Test func decimalsOfEveryLength() {
        for value in [0, 7, 10, 99, 100, 404, 65_535, Int.max, -1, -503, Int.min + 1] {
            let bytes = LineBytes.make(capacity: 21) { $0.putDecimal(value) }
            #expect(String(decoding: bytes, as: UTF8.self) == String(value))
        }
    }

    /// The timestamp agrees with `gmtime_r` at the dates a calendar gets wrong (leap days, the turns of centuries
    /// that are and are not leap years, the ends of months and years) and at many times drawn at random.
    @Test func timestampsAgreeWithTheCLibrarysCalendar() {
        func expected(_ seconds: Int, _ milliseconds: Int) -> String {
            var time = seconds
            var parts = tm()
            gmtime_r(&time, &parts)
            return String(
                format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), milliseconds)
        }
        let day = 86_400
        var times = [0, 59, 60, 3_599, 3_600, day - 1, day, 951_782_400, 951_868_799, 951_868_800, 4_107_456_000,
                     4_107_542_400, 4_102_444_799, 4_102_444_800, 1_796_083_200, 1_798_761_599, 1_709_164_800, 253_402_300_799]
        // In order across midnights (the last date written is reused within its day, and replaced at the next).
        times += Array(stride(from: 951_868_700, to: 951_868_900, by: 7)) + Array(stride(from: day - 50, to: day + 50, by: 3))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 { times.append(Int.random(in: 0..<253_402_300_800, using: &generator)) }
        var mismatches = 0
        for (index, seconds) in times.enumerated() {
            let milliseconds = index % 1_000
            let bytes = LineBytes.make(capacity: LineBytes.timestampCount) {
                $0.putTimestamp(seconds: seconds, milliseconds: milliseconds)
            }
            #expect(bytes.count == LineBytes.timestampCount)
            let written = String(decoding: bytes, as: UTF8.self)
            if written != expected(seconds, milliseconds) {
                mismatches += 1
                if mismatches <= 5 { Issue.record("\(seconds): \(written), gmtime_r says \(expected(seconds, milliseconds))") }
            }
        }
        #expect(mismatches == 0)
    }
}
