/// The SQLite store's second connection, for reads on the callers' threads (one at a time, behind a lock). In WAL
/// mode it reads the last committed state without waiting for the writer, and sees every append that completed.
final class ReaderDatabase {
    private let connection: SQLiteConnection
    private let begin: SQLiteStatement
    private let commit: SQLiteStatement
    private let rollback: SQLiteStatement
    private let selectSnapshot: SQLiteStatement
    private let selectRecords: SQLiteStatement
    private let selectIdleSessions: SQLiteStatement
    private let countSessions: SQLiteStatement

    /// Prepares the reader's statements on `connection`, a connection to a file whose tables are ready.
    init(connection: SQLiteConnection) throws(SessionStoreError) {
        self.connection = connection
        connection.setBusyTimeout(milliseconds: 5_000)
        begin = try connection.prepare("BEGIN")
        commit = try connection.prepare("COMMIT")
        rollback = try connection.prepare("ROLLBACK")
        selectSnapshot = try connection.prepare("SELECT snapshot_number, snapshot FROM sessions WHERE id = ?1")
        selectRecords = try connection.prepare(
            "SELECT number, body FROM records WHERE session = ?1 AND number > ?2 ORDER BY number")
        selectIdleSessions = try connection.prepare(
            "SELECT id FROM sessions WHERE last_active < ?1 ORDER BY last_active, id LIMIT ?2")
        countSessions = try connection.prepare("SELECT count(*) FROM sessions")
    }

    /// The session's snapshot and records, read in one transaction; nil when there is no such session.
    func load(_ session: String) throws(SessionStoreError) -> StoredSession? {
        if connection.isInTransaction { try? rollback.run() }
        try begin.run()
        do throws(SessionStoreError) {
            let loaded = try readSession(session)
            try commit.run()
            return loaded
        } catch {
            if connection.isInTransaction { try? rollback.run() }
            throw error
        }
    }

    private func readSession(_ session: String) throws(SessionStoreError) -> StoredSession? {
        let snapshot: StoredSnapshot?
        do {
            defer { selectSnapshot.reset() }
            try selectSnapshot.bind(session, at: 1)
            guard try selectSnapshot.step() else { return nil }
            snapshot =
                selectSnapshot.isNull(at: 0)
                ? nil : StoredSnapshot(number: Int(selectSnapshot.integer(at: 0)), body: selectSnapshot.bytes(at: 1))
        }
        defer { selectRecords.reset() }
        try selectRecords.bind(session, at: 1)
        try selectRecords.bind(snapshot?.number ?? 0, at: 2)
        var records: [StoredRecord] = []
        while try selectRecords.step() {
            records.append(
                StoredRecord(
                    session: session, number: Int(selectRecords.integer(at: 0)), body: selectRecords.bytes(at: 1)))
        }
        return StoredSession(snapshot: snapshot, records: records)
    }

    /// The ids of up to `limit` sessions last active before `time`, oldest first (ties by id).
    func sessions(lastActiveBefore time: Int64, limit: Int) throws(SessionStoreError) -> [String] {
        guard limit > 0 else { return [] }
        defer { selectIdleSessions.reset() }
        try selectIdleSessions.bind(time, at: 1)
        try selectIdleSessions.bind(limit, at: 2)
        var identifiers: [String] = []
        while try selectIdleSessions.step() {
            identifiers.append(selectIdleSessions.text(at: 0))
        }
        return identifiers
    }

    /// How many sessions the file holds.
    func sessionCount() throws(SessionStoreError) -> Int {
        defer { countSessions.reset() }
        guard try countSessions.step() else { return 0 }
        return Int(countSessions.integer(at: 0))
    }
}
