/// The SQLite store's second connection, for reads on the callers' threads (one at a time, behind a lock). In WAL
/// mode it reads the last committed state without waiting for the writer, and sees every append that completed:
/// a session's records are a chain in the log, read from its newest row, which `sessions` or ``LogTail`` knows.
final class ReaderDatabase {
    private let connection: SQLiteConnection
    private let tail: LogTail
    private let begin: SQLiteStatement
    private let commit: SQLiteStatement
    private let rollback: SQLiteStatement
    private let selectSession: SQLiteStatement
    private let selectLink: SQLiteStatement
    private let rowExists: SQLiteStatement
    private let selectNewestUnlisted: SQLiteStatement
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
        selectSession = try connection.prepare(
            "SELECT snapshot_number, snapshot, newest_seq FROM sessions WHERE id = ?1")
        selectLink = try connection.prepare(
            "SELECT number, body, previous_seq FROM log WHERE seq = ?1 AND session = ?2")
        rowExists = try connection.prepare("SELECT 1 FROM log WHERE seq = ?1 AND session = ?2")
        // Rows the tail was not told of: written after it was read, or by another program. Usually none: the
        // range starts past the log's end.
        selectNewestUnlisted = try connection.prepare("SELECT max(seq) FROM log WHERE seq > ?1 AND session = ?2")
        selectLastActive = try connection.prepare("SELECT last_active FROM sessions WHERE id = ?1")
        selectIdleSessions = try connection.prepare(
            "SELECT id, last_active FROM sessions WHERE last_active < ?1 ORDER BY last_active, id LIMIT ?2")
        countSessions = try connection.prepare("SELECT count(*) FROM sessions")
    }

    /// The session's snapshot and records, read in one transaction; nil when there is no such session.
    func load(_ session: String) throws(SessionStoreError) -> StoredSession? {
        // Before the transaction begins: see LogTail for why this order finds every completed append.
        let (inTail, highestKnown) = tail.rows(of: session)
        return try inTransaction { () throws(SessionStoreError) in
            try readSession(session, inTail: inTail, highestKnownRowID: highestKnown)
        }
    }

    private func readSession(
        _ session: String, inTail: LogTail.SessionRows, highestKnownRowID: Int64
    ) throws(SessionStoreError) -> StoredSession? {
        var hasRow = false
        var snapshot: StoredSnapshot?
        // The newest row of the session: the greatest of the one its row in `sessions` names, the newest of the
        // tail's that is still there, and any the tail was not told of.
        var newest: Int64 = 0
        do {
            defer { selectSession.reset() }
            try selectSession.bind(session, at: 1)
            if try selectSession.step() {
                hasRow = true
                if !selectSession.isNull(at: 0) {
                    snapshot = StoredSnapshot(
                        number: Int(selectSession.integer(at: 0)), body: selectSession.bytes(at: 1))
                }
                newest = selectSession.integer(at: 2)
            }
        }
        // A row removed since the tail was read is gone; the next older one listed may still be there.
        for row in inTail.rows.reversed() where row.rowID > newest {
            if try exists(row.rowID, of: session) {
                newest = row.rowID
                break
            }
        }
        do {
            defer { selectNewestUnlisted.reset() }
            try selectNewestUnlisted.bind(highestKnownRowID, at: 1)
            try selectNewestUnlisted.bind(session, at: 2)
            if try selectNewestUnlisted.step(), !selectNewestUnlisted.isNull(at: 0) {
                newest = max(newest, selectNewestUnlisted.integer(at: 0))
            }
        }
        // Newest first, down the chain to the snapshot (or the first record).
        var records: [StoredRecord] = []
        var seq = newest
        let snapshotNumber = snapshot?.number ?? 0
        while seq != 0 {
            defer { selectLink.reset() }
            try selectLink.bind(seq, at: 1)
            try selectLink.bind(session, at: 2)
            guard try selectLink.step() else { break }
            let number = Int(selectLink.integer(at: 0))
            guard number > snapshotNumber else { break }
            records.append(StoredRecord(session: session, number: number, body: selectLink.bytes(at: 1)))
            // A link always points to an older row; one that does not (a damaged file) ends the walk.
            let previous = selectLink.integer(at: 2)
            guard previous < seq else { break }
            seq = previous
        }
        guard hasRow || newest != 0 else { return nil }
        records.reverse()
        return StoredSession(snapshot: snapshot, records: records)
    }

    /// Whether the log has the row `seq`, of `session`.
    private func exists(_ seq: Int64, of session: String) throws(SessionStoreError) -> Bool {
        defer { rowExists.reset() }
        try rowExists.bind(seq, at: 1)
        try rowExists.bind(session, at: 2)
        return try rowExists.step()
    }

    /// The ids of up to `limit` sessions last active before `time`, oldest first (ties by id).
    func sessions(lastActiveBefore time: Int64, limit: Int) throws(SessionStoreError) -> [String] {
        guard limit > 0 else { return [] }
        let inTail = tail.allSessions()
        return try inTransaction { () throws(SessionStoreError) in
            var idle: [(id: String, lastActive: Int64)] = []
            do {
                defer { selectIdleSessions.reset() }
                try selectIdleSessions.bind(time, at: 1)
                // Sessions with rows in the tail may be active later than `sessions` says: read enough to drop them.
                try selectIdleSessions.bind(limit + inTail.count, at: 2)
                while try selectIdleSessions.step() {
                    let id = selectIdleSessions.text(at: 0)
                    let lastActive = max(selectIdleSessions.integer(at: 1), inTail[id]?.lastActive ?? .min)
                    if lastActive < time { idle.append((id, lastActive)) }
                }
            }
            for (id, rows) in inTail where rows.lastActive < time {
                if try lastActive(of: id) == nil { idle.append((id, rows.lastActive)) }
            }
            idle.sort { ($0.lastActive, $0.id) < ($1.lastActive, $1.id) }
            return idle.prefix(limit).map(\.id)
        }
    }

    /// How many sessions the file holds: those `sessions` has and those only the tail lists yet.
    func sessionCount() throws(SessionStoreError) -> Int {
        let inTail = tail.allSessions()
        return try inTransaction { () throws(SessionStoreError) in
            var count = 0
            do {
                defer { countSessions.reset() }
                if try countSessions.step() { count = Int(countSessions.integer(at: 0)) }
            }
            for id in inTail.keys where try lastActive(of: id) == nil {
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
