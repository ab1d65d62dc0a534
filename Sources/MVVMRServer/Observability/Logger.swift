import JSONPatch
import MicroHTTP

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
    /// Takes each line's bytes (with its newline), which are only valid during the call.
    private let sink: @Sendable (UnsafeBufferPointer<UInt8>) -> Void
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
        self.sink = { line in sink(Array(line)) }
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
        Self.line(messageLevel, message, fields).withUnsafeBufferPointer { sink($0) }
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

    /// Writes a request's line, `{"time":…,"level":…,"message":"request","method":…,"path":…,"status":…,
    /// "duration_ms":…,"ip":…,"session":…}` (`session` only when the request carried one), encoded straight to bytes:
    /// the server writes one for every request, so it builds no field list, no JSON values and no strings.
    /// - Parameters:
    ///   - messageLevel: the severity.
    ///   - fields: what the line says.
    ///
    /// The line is written into room on the stack (a long one, on the heap) and copied once, into the log writer's
    /// buffer: no array is made and freed for it.
    func logRequest(_ messageLevel: LogLevel, _ fields: RequestLogFields) {
        guard isEnabled(messageLevel) else { return }
        LineBytes.withTemporary(
            capacity: Self.requestLineCapacity(fields), { Self.writeRequestLine(messageLevel, fields, into: &$0) }
        ) { line in sink(line) }
    }

    /// A request line's bytes, with its newline (see ``logRequest(_:_:)``).
    static func requestLine(_ messageLevel: LogLevel, _ fields: RequestLogFields) -> [UInt8] {
        LineBytes.make(capacity: requestLineCapacity(fields)) { writeRequestLine(messageLevel, fields, into: &$0) }
    }

    /// The most bytes a request line of `fields` takes.
    static func requestLineCapacity(_ fields: RequestLogFields) -> Int {
        var capacity = 160 + LineBytes.escapedCapacity(fields.method) + LineBytes.escapedCapacity(fields.path)
        if case .forwarded(let text) = fields.address { capacity += LineBytes.escapedCapacity(text) }
        // A redacted id is at most the id's bytes and the mark's.
        if let session = fields.session {
            capacity += 24 + LineBytes.escapedCapacity(session) + LineBytes.escapedCapacity(SessionIdentifier.redactionMark)
        }
        return capacity
    }

    /// Writes a request line (see ``logRequest(_:_:)``) into room of ``requestLineCapacity(_:)`` bytes.
    static func writeRequestLine(_ messageLevel: LogLevel, _ fields: RequestLogFields, into line: inout LineBytes) {
        line.put(#"{"time":""#)
        line.putTimestampNow()
        line.put(requestLevelMembers(messageLevel))
        line.putEscaped(fields.method)
        line.put(#"","path":""#)
        line.putEscaped(fields.path)
        line.put(#"","status":"#)
        line.putDecimal(fields.status)
        line.put(#","duration_ms":"#)
        line.putMilliseconds(microseconds: fields.microseconds)
        line.put(#","ip":""#)
        switch fields.address {
        case .peer(let address): line.put(address)
        case .forwarded(let text): line.putEscaped(text)
        }
        line.put(UInt8(ascii: "\""))
        if let session = fields.session {
            line.put(#","session":""#)
            putRedacted(session, into: &line)
            line.put(UInt8(ascii: "\""))
        }
        line.put(UInt8(ascii: "}"))
        line.put(10)
    }

    /// What follows a request line's time up to its method's value, for each level (one literal rather than four
    /// writes and an escape of the level's name).
    static func requestLevelMembers(_ level: LogLevel) -> StaticString {
        switch level {
        case .debug: #"","level":"debug","message":"request","method":""#
        case .info: #"","level":"info","message":"request","method":""#
        case .warning: #"","level":"warning","message":"request","method":""#
        case .error: #"","level":"error","message":"request","method":""#
        case .off: #"","level":"off","message":"request","method":""#
        }
    }

    /// ``SessionIdentifier/redactionMark``'s UTF-8, which needs no escape.
    static let redactionMarkBytes = Array(SessionIdentifier.redactionMark.utf8)

    /// Writes ``SessionIdentifier/redacted(_:)`` of `identifier`, JSON-escaped, without making the `String` when the
    /// identifier starts with seven bytes of printable ASCII (as every id this server issues does): its first six
    /// characters are then its first six bytes.
    static func putRedacted(_ identifier: String, into line: inout LineBytes) {
        let written: Bool? = identifier.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.count >= 7, bytes[..<7].allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return false }
            line.putEscaped(UnsafeBufferPointer(rebasing: bytes[..<6]))
            return true
        }
        if written == true {
            redactionMarkBytes.withUnsafeBufferPointer { line.put($0) }
        } else {
            line.putEscaped(SessionIdentifier.redacted(identifier))
        }
    }

    /// Appends the time now as RFC 3339 UTC with milliseconds (`2026-12-01T20:00:00.000Z`).
    static func appendTimestamp(to bytes: inout [UInt8]) {
        bytes.append(contentsOf: LineBytes.make(capacity: LineBytes.timestampCount) { $0.putTimestampNow() })
    }
}

/// What a request's log line says (see ``Logger/logRequest(_:_:)``).
struct RequestLogFields {
    /// Where a request came from, as its line says it.
    enum Address {
        /// The connection's peer, written from its bytes.
        case peer(IPAddress)
        /// What a trusted proxy's `X-Forwarded-For` named.
        case forwarded(String)
    }

    /// The request's method.
    let method: String
    /// Its path, without the query (which may carry a session id).
    let path: String
    /// The answer's status.
    let status: Int
    /// How long the server took to answer, in microseconds (``MonotonicClock``'s readings, with no `Duration`
    /// arithmetic, which works in 128 bits).
    let microseconds: Int
    /// The client's address.
    let address: Address
    /// The session id the request carried, if any; the line holds only its redacted form.
    let session: String?
}
