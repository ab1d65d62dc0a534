import JSONPatch
import MVVMR
import Testing

/// A session's input log as `GET /api/session/log` gives it (format `mvvmr-session-log`, versions 1 and 2; see
/// docs/PROTOCOL.md "Session logs"): what a bug report attaches, and what ``PageTester/replay(_:registry:services:sourceLocation:)``
/// turns back into the session the user had.
public struct SessionLog: Sendable, Hashable {
    /// The newest version of the log's format this kit reads (version 2 added the snapshot).
    public static let newestVersion = 2

    /// The snapshot the log was compacted into, standing for every record up to its number; nil when the
    /// log starts at its first record.
    public let snapshot: SessionSnapshot?
    /// The records (after the snapshot, when there is one), in number order.
    public let records: [InputRecord]
    /// The unit names the server that wrote the log served.
    public let units: [String]

    /// A log of these records (a test's own, collected with `PageSession.setRecorder`), after `snapshot` when
    /// one is given (`PageSession.takeSnapshot`).
    /// - Parameters:
    ///   - snapshot: the snapshot the records follow, if any.
    ///   - records: the records, in number order.
    ///   - units: the unit names of the app that wrote them.
    public init(snapshot: SessionSnapshot? = nil, records: [InputRecord], units: [String] = []) {
        self.snapshot = snapshot
        self.records = records
        self.units = units
    }

    /// A log read from its JSON text.
    /// - Parameter bytes: the body of `GET /api/session/log`.
    /// - Throws: ``InputRecordFormatError`` when it is not such a log (wrong format, newer version, bad record).
    public init(bytes: [UInt8]) throws(InputRecordFormatError) {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: bytes, maxDepth: 512)
        } catch {
            throw InputRecordFormatError("the log is not JSON: \(error)")
        }
        try self.init(json: json)
    }

    /// A log read from its JSON value.
    /// - Parameter json: the parsed body of `GET /api/session/log`.
    /// - Throws: ``InputRecordFormatError`` when it is not such a log.
    public init(json: JSONValue) throws(InputRecordFormatError) {
        guard json["format"]?.stringValue == "mvvmr-session-log" else {
            throw InputRecordFormatError("'format' must be \"mvvmr-session-log\"")
        }
        guard let version = json["version"]?.intValue, (1...Self.newestVersion).contains(version) else {
            throw InputRecordFormatError(
                "'version' \(json["version"].map { "\($0)" } ?? "(none)") is not 1 or 2, the versions this kit reads")
        }
        var snapshot: SessionSnapshot?
        if version >= 2, let snapshotJSON = json["snapshot"], !snapshotJSON.isNull {
            snapshot = try SessionSnapshot(json: snapshotJSON)
        }
        guard let items = json["records"]?.arrayValue else { throw InputRecordFormatError("'records' must be an array") }
        var records: [InputRecord] = []
        for item in items { records.append(try InputRecord(json: item)) }
        self.init(snapshot: snapshot, records: records, units: json["units"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }
}

extension PageTester {
    /// Replays a session log (a user's bug report, taken from a real server with `GET /api/session/log`) into
    /// a fresh session on a virtual clock, with your services, and returns it to assert its pages.
    ///
    /// Every record's events are compared with the digests the server logged: a page that comes out different
    /// from what the user saw is an issue (the code changed since, or depends on something outside its
    /// context), and so is a record that could not be applied. A compacted log's pages come back from its
    /// snapshot first; one whose saved state no longer gives the view the snapshot holds is an issue too.
    ///
    /// ```swift
    /// let session = try PageTester.replay(SessionLog(bytes: reported), registry: DemoApp.registry, services: services)
    /// #expect(session.pages.first { $0.unit == "counters" }?.view["rows"]?[0]?["count"] == 2)
    /// ```
    /// - Parameters:
    ///   - log: the session log.
    ///   - registry: the app's units (those the log names must be there).
    ///   - services: the services its ViewModels read; async results come from the log, not from them.
    ///   - sourceLocation: where issues are reported.
    /// - Returns: the replayed session, still on its virtual clock.
    public static func replay(
        _ log: SessionLog, registry: UnitRegistry, services: Services = Services(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> PageSession {
        let session = PageSession(registry: registry, services: services, clock: .virtual)
        let report = session.restore(from: log.snapshot, records: log.records)
        for unit in report.snapshotMismatchedUnits {
            Issue.record("\(unit): its saved state did not give the view the snapshot holds", sourceLocation: sourceLocation)
        }
        for number in report.mismatchedRecords {
            Issue.record("record \(number): the replay did not give the events the server logged", sourceLocation: sourceLocation)
        }
        if report.skipped > 0 {
            Issue.record("\(report.skipped) records were skipped (their page had diverged)", sourceLocation: sourceLocation)
        }
        return session
    }
}
