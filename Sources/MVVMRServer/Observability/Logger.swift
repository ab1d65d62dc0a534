import JSONPatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes one JSON object per line to standard output, each with one `write(2)`: nothing is buffered,
/// so nothing is lost on SIGTERM, and lines from different threads never interleave.
public struct Logger: Sendable {
    /// The least severe level written.
    public let level: LogLevel
    private let sink: @Sendable ([UInt8]) -> Void

    /// Creates a logger writing to standard output.
    /// - Parameter level: the least severe level written.
    public init(level: LogLevel) {
        self.init(level: level) { line in
            line.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = write(1, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    if written <= 0 { return }
                    offset += written
                }
            }
        }
    }

    /// Creates a logger that hands each line (with its newline) to `sink`; tests use it.
    /// - Parameters:
    ///   - level: the least severe level written.
    ///   - sink: receives each line.
    public init(level: LogLevel, sink: @escaping @Sendable ([UInt8]) -> Void) {
        self.level = level
        self.sink = sink
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
    ///   - fields: more facts, in order.
    public func log(_ messageLevel: LogLevel, _ message: String, _ fields: [(String, JSONValue)] = []) {
        guard isEnabled(messageLevel) else { return }
        var object = JSONObject()
        object["time"] = .string(Self.timestamp())
        object["level"] = .string(messageLevel.rawValue)
        object["message"] = .string(message)
        for (key, value) in fields { object[key] = value }
        var line = JSONValue.object(object).jsonBytes
        line.append(10)
        sink(line)
    }

    /// The time now as RFC 3339 UTC with milliseconds.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let milliseconds = Int(now.tv_nsec / 1_000_000)
        let millisecondsText = milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(millisecondsText)Z"
    }
}
