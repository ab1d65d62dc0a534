import JSONPatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes one JSON object per line to standard output. Each line is encoded straight to bytes and handed to the
/// process's ``LogWriter``, whose own thread writes lines in batches: a request thread never waits for standard
/// output, and lines from different threads never interleave. ``flush()`` (which a stopping server calls) waits
/// until every line logged before it is written, so a SIGTERM loses none.
public struct Logger: Sendable {
    /// The least severe level written.
    public let level: LogLevel
    private let sink: @Sendable ([UInt8]) -> Void
    private let flushSink: @Sendable () -> Void

    /// Creates a logger writing to standard output.
    /// - Parameter level: the least severe level written.
    public init(level: LogLevel) {
        self.level = level
        sink = { line in LogWriter.standardOutput.append(line) }
        flushSink = { LogWriter.standardOutput.flush() }
    }

    /// Creates a logger that hands each line (with its newline) to `sink`; tests use it.
    /// - Parameters:
    ///   - level: the least severe level written.
    ///   - sink: receives each line.
    public init(level: LogLevel, sink: @escaping @Sendable ([UInt8]) -> Void) {
        self.level = level
        self.sink = sink
        flushSink = {}
    }

    /// Waits until every line logged before the call is written to standard output (a sink's logger: at once).
    public func flush() {
        flushSink()
    }

    /// Whether a message of this level would be written.
    /// - Parameter messageLevel: the level.
    /// - Returns: `true` when it is at or above the logger's level.
    public func isEnabled(_ messageLevel: LogLevel) -> Bool {
        messageLevel != .off && level != .off && messageLevel >= level
    }

    /// Writes one line: `{"time":…,"level":…,"message":…, fields…}`.
    /// - Parameters:
    ///   - messageLevel: the severity.
    ///   - message: what happened.
    ///   - fields: more facts, in order (a key given twice is written twice: give each once).
    public func log(_ messageLevel: LogLevel, _ message: String, _ fields: [(String, JSONValue)] = []) {
        guard isEnabled(messageLevel) else { return }
        sink(Self.line(messageLevel, message, fields))
    }

    /// One line's bytes, with its newline, encoded straight from the fields (no JSON tree is built for it).
    static func line(_ messageLevel: LogLevel, _ message: String, _ fields: [(String, JSONValue)]) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(96 + message.utf8.count + fields.count * 32)
        line.append(contentsOf: #"{"time":""#.utf8)
        appendTimestamp(to: &line)
        line.append(contentsOf: #"","level":""#.utf8)
        line.append(contentsOf: messageLevel.rawValue.utf8)
        line.append(contentsOf: #"","message":"#.utf8)
        JSONValue.string(message).encode(into: &line)
        for (key, value) in fields {
            line.append(UInt8(ascii: ","))
            JSONValue.string(key).encode(into: &line)
            line.append(UInt8(ascii: ":"))
            value.encode(into: &line)
        }
        line.append(UInt8(ascii: "}"))
        line.append(10)
        return line
    }

    /// Appends the time now as RFC 3339 UTC with milliseconds (`2026-12-01T20:00:00.000Z`).
    static func appendTimestamp(to bytes: inout [UInt8]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = max(0, value)
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: (rest / divisor) % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2)
        bytes.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2)
        bytes.append(UInt8(ascii: "."))
        digits(Int(now.tv_nsec / 1_000_000), 3)
        bytes.append(UInt8(ascii: "Z"))
    }
}
