/// The SQLite store's second connection, for reads on the callers' threads (one at a time, behind a lock). In WAL
/// mode it reads the last committed state without waiting for the writer, and sees every append that completed:
/// in `records`, or in the shared log, where ``LogTail`` says each session's rows are.
final class ReaderDatabase {
    private let connection: SQLiteConnection
    private let tail: LogTail
    private let begin: SQLiteStatement
    private let commit: SQLiteStatement
    private let rollback: SQLiteStatement
    private let selectSnapshot: SQLiteStatement
    private let selectRecords: SQLiteStatement
    private let selectLogRow: SQLiteStatement
    private let selectHighestLogRow: SQLiteStatement
    private let scanLogForSession: SQLiteStatement
    private let selectLastActive: SQLiteStatement
    private let selectIdleSessions: SQLiteStatement
    private let countSessions: SQLiteStatement

    /// Prepares the reader's statements on `connection`, a connection to a file whose tables are ready.
    init(connection: SQLiteConnection, tail: LogTail) throws(SessionStoreError) {
        self.connection = connection
        self.tail = tail
        connection.setBusyTimeout(milliseconds: 5_000)
        begin = try connection.prepare("BEGIN")
        commit = try connection.prepare("COMMIT")
        rollback = try connection.prepare("ROLLBACK")
        selectSnapshot = try connection.prepare("SELECT snapshot_number, snapshot FROM sessions WHERE id = ?1")
        selectRecords = try connection.prepare(
            "SELECT number, body FROM records WHERE session = ?1 AND number > ?2 ORDER BY number")
        selectLogRow = try connection.prepare("SELECT number, body FROM log WHERE seq = ?1 AND session = ?2")
        selectHighestLogRow = try connection.prepare("SELECT max(seq) FROM log")
        scanLogForSession = try connection.prepare("SELECT number, body FROM log WHERE session = ?1 ORDER BY seq")
        selectLastActive = try connection.prepare("SELECT last_active FROM sessions WHERE id = ?1")
        selectIdleSessions = try connection.prepare(
            "SELECT id, last_active FROM sessions WHERE last_active < ?1 ORDER BY last_active, id LIMIT ?2")
        countSessions = try connection.prepare("SELECT count(*) FROM sessions")
    }

    /// The session's snapshot and records, read in one transaction; nil when there is no such session.
    func load(_ session: String) throws(SessionStoreError) -> StoredSession? {
        // Before the transaction begins: see LogTail for why this order finds every completed append.
        let (inLog, highestKnown) = tail.rows(of: session)
        return try inTransaction { () throws(SessionStoreError) in
            try readSession(session, inLog: inLog, highestKnownRowID: highestKnown)
        }
    }

    private func readSession(
        _ session: String, inLog: LogTail.SessionRows, highestKnownRowID: Int64
    ) throws(SessionStoreError) -> StoredSession? {
        var hasRow = false
        var snapshot: StoredSnapshot?
        do {
            defer { selectSnapshot.reset() }
            try selectSnapshot.bind(session, at: 1)
            if try selectSnapshot.step() {
                hasRow = true
                if !selectSnapshot.isNull(at: 0) {
                    snapshot = StoredSnapshot(
                        number: Int(selectSnapshot.integer(at: 0)), body: selectSnapshot.bytes(at: 1))
                }
            }
        }
        var records: [StoredRecord] = []
        if hasRow {
            defer { selectRecords.reset() }
            try selectRecords.bind(session, at: 1)
            try selectRecords.bind(snapshot?.number ?? 0, at: 2)
            while try selectRecords.step() {
                records.append(
                    StoredRecord(
                        session: session, number: Int(selectRecords.integer(at: 0)), body: selectRecords.bytes(at: 1)))
            }
        }
        var foundInLog = false
        let take = { (statement: SQLiteStatement) in
            foundInLog = true
            let number = Int(statement.integer(at: 0))
            guard number > (records.last?.number ?? snapshot?.number ?? 0) else { return }
            records.append(StoredRecord(session: session, number: number, body: statement.bytes(at: 1)))
        }
        if try highestLogRowID() > highestKnownRowID {
            // Another program wrote to the log since the tail was told: find the session's rows the slow way.
            defer { scanLogForSession.reset() }
            try scanLogForSession.bind(session, at: 1)
            while try scanLogForSession.step() { take(scanLogForSession) }
        } else {
            for row in inLog.rows {
                defer { selectLogRow.reset() }
                try selectLogRow.bind(row.rowID, at: 1)
                try selectLogRow.bind(session, at: 2)
                // A row moved (or deleted) since the tail was read is gone from the log: it is in `records`, read
                // above.
                if try selectLogRow.step() { take(selectLogRow) }
            }
        }
        guard hasRow || foundInLog else { return nil }
        return StoredSession(snapshot: snapshot, records: records)
    }

    /// The log's highest rowid (0 when it is empty).
    private func highestLogRowID() throws(SessionStoreError) -> Int64 {
        defer { selectHighestLogRow.reset() }
        guard try selectHighestLogRow.step(), !selectHighestLogRow.isNull(at: 0) else { return 0 }
        return selectHighestLogRow.integer(at: 0)
    }

    /// The ids of up to `limit` sessions last active before `time`, oldest first (ties by id).
    func sessions(lastActiveBefore time: Int64, limit: Int) throws(SessionStoreError) -> [String] {
        guard limit > 0 else { return [] }
        let inLog = tail.allSessions()
        return try inTransaction { () throws(SessionStoreError) in
            var idle: [(id: String, lastActive: Int64)] = []
            do {
                defer { selectIdleSessions.reset() }
                try selectIdleSessions.bind(time, at: 1)
                // Sessions with rows in the log may be active later than `sessions` says: read enough to drop them.
                try selectIdleSessions.bind(limit + inLog.count, at: 2)
                while try selectIdleSessions.step() {
                    let id = selectIdleSessions.text(at: 0)
                    let lastActive = max(selectIdleSessions.integer(at: 1), inLog[id]?.lastActive ?? .min)
                    if lastActive < time { idle.append((id, lastActive)) }
                }
            }
            for (id, rows) in inLog where rows.lastActive < time {
                if try lastActive(of: id) == nil { idle.append((id, rows.lastActive)) }
            }
            idle.sort { ($0.lastActive, $0.id) < ($1.lastActive, $1.id) }
            return idle.prefix(limit).map(\.id)
        }
    }

    /// How many sessions the file holds: those `sessions` has and those only the log has yet.
    func sessionCount() throws(SessionStoreError) -> Int {
        let inLog = tail.allSessions()
        return try inTransaction { () throws(SessionStoreError) in
            var count = 0
            do {
                defer { countSessions.reset() }
                if try countSessions.step() { count = Int(countSessions.integer(at: 0)) }
            }
            for id in inLog.keys where try lastActive(of: id) == nil {
                count += 1
            }
            return count
        }
    }

    /// The session's last activity as `sessions` has it; nil when it has no row for it.
    private func lastActive(of session: String) throws(SessionStoreError) -> Int64? {
        defer { selectLastActive.reset() }
        try selectLastActive.bind(session, at: 1)
        guard try selectLastActive.step() else { return nil }
        return selectLastActive.integer(at: 0)
    }

    /// Runs `body` in one read transaction, so that everything it reads is of one commit.
    private func inTransaction<Value>(
        _ body: () throws(SessionStoreError) -> Value
    ) throws(SessionStoreError) -> Value {
        if connection.isInTransaction { try? rollback.run() }
        try begin.run()
        do throws(SessionStoreError) {
            let value = try body()
            try commit.run()
            return value
        } catch {
            if connection.isInTransaction { try? rollback.run() }
            throw error
        }
    }
}
