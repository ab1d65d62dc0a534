/// The writer thread's connection and the statements it prepared once: writes a batch of requests in one
/// transaction, each behind the rules of ``SessionFence``, and moves the shared log into `records` (see
/// ``LogTail``).
final class WriterDatabase {
    private let connection: SQLiteConnection
    /// Where the log's rows are, shared with the reader.
    let tail: LogTail
    private let begin: SQLiteStatement
    private let commit: SQLiteStatement
    private let rollback: SQLiteStatement
    private let dataVersion: SQLiteStatement
    private let selectSession: SQLiteStatement
    private let appendToLog: SQLiteStatement
    private let selectLog: SQLiteStatement
    private let moveLogRecords: SQLiteStatement
    private let moveLogSessions: SQLiteStatement
    private let emptyLog: SQLiteStatement
    private let selectMoveWatermark: SQLiteStatement
    private let deleteLogRow: SQLiteStatement
    private let deleteLogRange: SQLiteStatement
    private let moveLogRow: SQLiteStatement
    private let upsertSession: SQLiteStatement
    private let noteMovedThrough: SQLiteStatement
    private let selectHighestSeq: SQLiteStatement
    private let updateSnapshot: SQLiteStatement
    private let deleteRecordsThrough: SQLiteStatement
    private let deleteRecord: SQLiteStatement
    private let touchSession: SQLiteStatement
    private let deleteSession: SQLiteStatement
    private let deleteRecords: SQLiteStatement
    /// `PRAGMA data_version` when the tail was last known to match the file: another connection's commit changes it.
    private var knownDataVersion: Int64?
    /// The `seq` the next row of the log gets (as committed: a transaction counts on from it in `TailChanges`).
    private var nextSeq: Int64 = 1
    /// How many frames the write-ahead log may hold before the writer checkpoints it.
    private let checkpointFrames: Int

    /// What a transaction changes in the tail, applied once it commits: its own view of the log's rows.
    private struct TailChanges {
        /// The log's rows up to this rowid were moved into `records` in this transaction (nil: none).
        var movedThrough: Int64?
        /// The rows this transaction appended (after its last move), not yet in `replaced`.
        var additions: [LogTail.Addition] = []
        /// The log's rows of every session whose rows this transaction removed, as they are now (its additions
        /// before the removal included): these replace the committed tail's once it commits.
        var replaced: [String: LogTail.SessionRows] = [:]
        /// The transaction's own view of each session's last number, so that records of one session chain.
        var lastNumbers: [String: Int] = [:]
        /// The `seq` the transaction's next row gets.
        var nextSeq: Int64

        /// The rows `session` has in the log as this transaction sees it (for the rare changes that remove rows:
        /// it looks through the transaction's additions).
        func rows(of session: String, committed tail: LogTail) -> LogTail.SessionRows {
            var rows = replaced[session] ?? tail.rows(of: session).rows
            if let movedThrough { rows.rows.removeAll { $0.rowID <= movedThrough } }
            for addition in additions where addition.session == session { rows.add(addition) }
            return rows
        }

        /// Sets the session's rows as this transaction leaves them.
        mutating func replace(_ rows: LogTail.SessionRows, of session: String) {
            additions.removeAll { $0.session == session }
            replaced[session] = rows
        }
    }

    /// Prepares the writer's statements on `connection` and reads the log's rows into `tail`.
    /// - Parameters:
    ///   - connection: the writer's connection, configured, its tables ready.
    ///   - tail: where the log's rows are, shared with the reader.
    ///   - checkpointFrames: how many frames the write-ahead log may hold before `checkpointIfDue()` copies them
    ///     into the database file.
    init(connection: SQLiteConnection, tail: LogTail, checkpointFrames: Int) throws(SessionStoreError) {
        self.connection = connection
        self.tail = tail
        self.checkpointFrames = checkpointFrames
        begin = try connection.prepare("BEGIN IMMEDIATE")
        commit = try connection.prepare("COMMIT")
        rollback = try connection.prepare("ROLLBACK")
        dataVersion = try connection.prepare("PRAGMA data_version")
        selectSession = try connection.prepare("SELECT last_number, snapshot_number FROM sessions WHERE id = ?1")
        appendToLog = try connection.prepare(
            "INSERT INTO log (seq, session, number, last_active, body) VALUES (?5, ?1, ?2, ?3, ?4)")
        selectLog = try connection.prepare("SELECT seq, session, number, last_active FROM log ORDER BY seq")
        // OR REPLACE: a row another program left in `records` under the same key must not hold the log up forever;
        // the log's row is the later one. Sorted, so that each session's page is visited once.
        moveLogRecords = try connection.prepare(
            "INSERT OR REPLACE INTO records (session, number, body) SELECT session, number, body FROM log "
                + "WHERE seq <= ?1 ORDER BY session, number")
        // `WHERE true` keeps SQLite from reading ON CONFLICT as a join's constraint.
        moveLogSessions = try connection.prepare(
            "INSERT INTO sessions (id, last_number, last_active) "
                + "SELECT session, max(number), max(last_active) FROM log WHERE seq <= ?1 GROUP BY session "
                + "ON CONFLICT (id) DO UPDATE SET last_number = max(last_number, excluded.last_number), "
                + "last_active = max(last_active, excluded.last_active)")
        emptyLog = try connection.prepare("DELETE FROM log WHERE seq <= ?1")
        selectMoveWatermark = try connection.prepare(
            "SELECT coalesce((SELECT seq FROM log ORDER BY seq LIMIT 1 OFFSET ?1), (SELECT max(seq) FROM log))")
        deleteLogRow = try connection.prepare("DELETE FROM log WHERE seq = ?1")
        deleteLogRange = try connection.prepare(
            "DELETE FROM log WHERE seq BETWEEN ?1 AND ?2 AND session = ?3 AND number <= ?4")
        moveLogRow = try connection.prepare(
            "INSERT OR REPLACE INTO records (session, number, body) SELECT session, number, body FROM log WHERE seq = ?1")
        upsertSession = try connection.prepare(
            "INSERT INTO sessions (id, last_number, last_active) VALUES (?1, ?2, ?3) "
                + "ON CONFLICT (id) DO UPDATE SET last_number = max(last_number, excluded.last_number), "
                + "last_active = max(last_active, excluded.last_active)")
        noteMovedThrough = try connection.prepare("UPDATE log_state SET moved_through = max(moved_through, ?1)")
        selectHighestSeq = try connection.prepare(
            "SELECT max(coalesce((SELECT max(seq) FROM log), 0), (SELECT moved_through FROM log_state))")
        updateSnapshot = try connection.prepare("UPDATE sessions SET snapshot_number = ?2, snapshot = ?3 WHERE id = ?1")
        deleteRecordsThrough = try connection.prepare("DELETE FROM records WHERE session = ?1 AND number <= ?2")
        deleteRecord = try connection.prepare("DELETE FROM records WHERE session = ?1 AND number = ?2")
        touchSession = try connection.prepare("UPDATE sessions SET last_active = ?2 WHERE id = ?1")
        deleteSession = try connection.prepare("DELETE FROM sessions WHERE id = ?1")
        deleteRecords = try connection.prepare("DELETE FROM records WHERE session = ?1")
        try readTailIfChanged()
        connection.countWALFrames()
    }

    /// Writes `requests` in one transaction. Success: each request's own outcome, in order (a request refused by
    /// the fence wrote nothing and fails alone). Failure: SQLite failed, the whole transaction was rolled back.
    func write(_ requests: [WriteRequest]) -> Result<[Result<Void, SessionStoreError>], SessionStoreError> {
        // A rollback that failed last time leaves the transaction open; a new one could never begin.
        if connection.isInTransaction { try? rollback.run() }
        var outcomes: [Result<Void, SessionStoreError>] = []
        outcomes.reserveCapacity(requests.count)
        var changes = TailChanges(nextSeq: nextSeq)
        do throws(SessionStoreError) {
            try begin.run()
            // Inside the transaction, so that no other connection can write between this look and the commit.
            if try readTailIfChanged() { changes.nextSeq = nextSeq }
            for request in requests {
                outcomes.append(try apply(request, changes: &changes))
            }
            try commit.run()
        } catch {
            // SQLite rolls some failures back by itself (a full disk, for one); otherwise it is done here.
            if connection.isInTransaction { try? rollback.run() }
            return .failure(error)
        }
        // Our own commit changes no data_version of ours; only other connections' do.
        nextSeq = changes.nextSeq
        tail.apply(changes.replaced, removingThrough: changes.movedThrough)
        tail.add(changes.additions)
        return .success(outcomes)
    }

    /// Copies the write-ahead log into the database file once it holds `checkpointFrames` frames: called between
    /// batches, after their completions ran, so that no answer waits for the checkpoint's writes and syncs (SQLite's
    /// own checkpoint would run inside a commit). A failed checkpoint changes nothing and is tried again later.
    func checkpointIfDue() {
        guard connection.walFrameCount >= checkpointFrames else { return }
        try? connection.checkpoint()
    }

    /// Moves the oldest `count` rows of the log (all of them, when it holds fewer) into `records` and `sessions`, in
    /// one transaction of its own.
    func moveLog(oldest count: Int) -> Result<Void, SessionStoreError> {
        write([.moveLog(oldest: count)]).map { _ in () }
    }

    /// Makes one request's change. Returns its refusal by the fence; throws when SQLite fails.
    private func apply(
        _ request: WriteRequest, changes: inout TailChanges
    ) throws(SessionStoreError) -> Result<Void, SessionStoreError> {
        if case .append(let record, let lastActive) = request {
            let lastNumber = try lastNumber(of: record.session, changes: changes)
            if let refusal = SessionFence.refusal(toAppend: record, after: lastNumber) { return .failure(refusal) }
            try appendToLog.bind(record.session, at: 1)
            try appendToLog.bind(record.number, at: 2)
            try appendToLog.bind(lastActive, at: 3)
            try appendToLog.bind(record.body, at: 4)
            try appendToLog.bind(changes.nextSeq, at: 5)
            try appendToLog.run()
            changes.additions.append(
                LogTail.Addition(
                    session: record.session, row: LogTail.Row(rowID: changes.nextSeq, number: record.number),
                    lastActive: lastActive))
            changes.nextSeq += 1
            changes.lastNumbers[record.session] = record.number
            return .success(())
        }
        switch request {
        case .append:
            break

        case .moveLog(let count):
            try moveLogInTransaction(oldest: count, changes: &changes)

        case .saveSnapshot(let snapshot, let session):
            // The session's row says how far its log goes (its rows in the log included) before the fence looks.
            try noteLoggedNumbers(of: session, changes: changes)
            let numbers = try sessionNumbers(of: session)
            if let refusal = SessionFence.refusal(
                toSave: snapshot, of: session, lastNumber: numbers?.last, currentSnapshotNumber: numbers?.snapshot)
            {
                return .failure(refusal)
            }
            try updateSnapshot.bind(session, at: 1)
            try updateSnapshot.bind(snapshot.number, at: 2)
            try updateSnapshot.bind(snapshot.body, at: 3)
            try updateSnapshot.run()
            try deleteRecordsThrough.bind(session, at: 1)
            try deleteRecordsThrough.bind(snapshot.number, at: 2)
            try deleteRecordsThrough.run()
            // The records it stands for that are still in the log go from there, where they are: no move.
            try removeLogRows(of: session, through: snapshot.number, changes: &changes)

        case .removeRecords(let numbers, let session):
            // Its row keeps the session's last number, even when the last record goes.
            try noteLoggedNumbers(of: session, changes: changes)
            for number in numbers {
                try deleteRecord.bind(session, at: 1)
                try deleteRecord.bind(number, at: 2)
                try deleteRecord.run()
            }
            let removed = Set(numbers)
            try removeLogRows(of: session, changes: &changes) { removed.contains($0) }

        case .touch(let activity):
            for entry in activity {
                // The session's rows leave the log first (their activity would count again at the next move); a
                // session only the log had gets its row in `sessions`; an unknown one is ignored.
                try moveLogRows(of: entry.session, changes: &changes)
                try touchSession.bind(entry.session, at: 1)
                try touchSession.bind(entry.time, at: 2)
                try touchSession.run()
            }

        case .delete(let session):
            try deleteRecords.bind(session, at: 1)
            try deleteRecords.run()
            try deleteSession.bind(session, at: 1)
            try deleteSession.run()
            try removeLogRows(of: session, through: .max, changes: &changes)
            changes.lastNumbers[session] = 0

        case .barrier:
            break

        case .pragma(let statement, let reply):
            reply(try connection.integer(statement))
        }
        return .success(())
    }

    /// The session's last record number as this transaction sees it (0: no such session).
    private func lastNumber(of session: String, changes: TailChanges) throws(SessionStoreError) -> Int {
        if let known = changes.lastNumbers[session] { return known }
        if let inLog = changes.replaced[session]?.lastNumber { return inLog }
        // Moving rows into `records` leaves the session's last number as it was.
        if let inLog = tail.rows(of: session).rows.lastNumber { return inLog }
        return try sessionNumbers(of: session)?.last ?? 0
    }

    /// Writes what the session's rows in the log say into its row in `sessions` (making the row for a session
    /// only the log has): its last number and last activity, never lowering either.
    private func noteLoggedNumbers(of session: String, changes: TailChanges) throws(SessionStoreError) {
        let rows = changes.rows(of: session, committed: tail)
        guard let lastNumber = rows.lastNumber else { return }
        try upsertSession.bind(session, at: 1)
        try upsertSession.bind(lastNumber, at: 2)
        try upsertSession.bind(rows.lastActive, at: 3)
        try upsertSession.run()
    }

    /// Moves the session's rows from the log into `records` and `sessions`, by their rowids.
    private func moveLogRows(of session: String, changes: inout TailChanges) throws(SessionStoreError) {
        let rows = changes.rows(of: session, committed: tail)
        guard !rows.rows.isEmpty else { return }
        try noteLoggedNumbers(of: session, changes: changes)
        for row in rows.rows {
            try moveLogRow.bind(row.rowID, at: 1)
            try moveLogRow.run()
        }
        try removeLogRows(of: session, through: .max, changes: &changes)
    }

    /// Deletes the session's rows in the log up to record `number`, in one statement over their rowids' range.
    private func removeLogRows(
        of session: String, through number: Int, changes: inout TailChanges
    ) throws(SessionStoreError) {
        var rows = changes.rows(of: session, committed: tail)
        guard let first = rows.rows.first, first.number <= number else { return }
        let last = rows.rows.last { $0.number <= number } ?? first
        try deleteLogRange.bind(first.rowID, at: 1)
        try deleteLogRange.bind(last.rowID, at: 2)
        try deleteLogRange.bind(session, at: 3)
        try deleteLogRange.bind(number, at: 4)
        try deleteLogRange.run()
        rows.rows.removeAll { $0.number <= number }
        changes.replace(rows, of: session)
    }

    /// Deletes the session's rows in the log whose record numbers `remove` picks, by their rowids.
    private func removeLogRows(
        of session: String, changes: inout TailChanges, where remove: (Int) -> Bool
    ) throws(SessionStoreError) {
        var rows = changes.rows(of: session, committed: tail)
        guard rows.rows.contains(where: { remove($0.number) }) else { return }
        for row in rows.rows where remove(row.number) {
            try deleteLogRow.bind(row.rowID, at: 1)
            try deleteLogRow.run()
        }
        rows.rows.removeAll { remove($0.number) }
        changes.replace(rows, of: session)
    }

    /// Moves the log's oldest `count` rows (all, when it holds fewer) into `records` and `sessions` inside the open
    /// transaction.
    private func moveLogInTransaction(oldest count: Int, changes: inout TailChanges) throws(SessionStoreError) {
        let watermark: Int64
        do {
            defer { selectMoveWatermark.reset() }
            try selectMoveWatermark.bind(max(0, count - 1), at: 1)
            guard try selectMoveWatermark.step(), !selectMoveWatermark.isNull(at: 0) else { return }
            watermark = selectMoveWatermark.integer(at: 0)
        }
        for statement in [moveLogRecords, moveLogSessions, noteMovedThrough, emptyLog] {
            try statement.bind(watermark, at: 1)
            try statement.run()
        }
        changes.movedThrough = max(changes.movedThrough ?? 0, watermark)
        changes.additions.removeAll { $0.row.rowID <= watermark }
        for (session, rows) in changes.replaced {
            var kept = rows
            kept.rows.removeAll { $0.rowID <= watermark }
            changes.replaced[session] = kept
        }
    }

    /// Builds the tail from the log's rows, and finds the next `seq`, when the file changed under another connection
    /// (or was just opened). Returns whether it did.
    @discardableResult
    private func readTailIfChanged() throws(SessionStoreError) -> Bool {
        let version: Int64
        do {
            defer { dataVersion.reset() }
            guard try dataVersion.step() else { return false }
            version = dataVersion.integer(at: 0)
        }
        guard version != knownDataVersion else { return false }
        do {
            defer { selectHighestSeq.reset() }
            if try selectHighestSeq.step() { nextSeq = selectHighestSeq.integer(at: 0) + 1 }
        }
        defer { selectLog.reset() }
        var additions: [LogTail.Addition] = []
        while try selectLog.step() {
            additions.append(
                LogTail.Addition(
                    session: selectLog.text(at: 1),
                    row: LogTail.Row(rowID: selectLog.integer(at: 0), number: Int(selectLog.integer(at: 2))),
                    lastActive: selectLog.integer(at: 3)))
        }
        tail.replace(with: additions)
        knownDataVersion = version
        return true
    }

    /// The session's last record number and its snapshot's number as `sessions` has them, or nil when it has no
    /// row for the session.
    private func sessionNumbers(of session: String) throws(SessionStoreError) -> (last: Int, snapshot: Int?)? {
        defer { selectSession.reset() }
        try selectSession.bind(session, at: 1)
        guard try selectSession.step() else { return nil }
        let snapshot = selectSession.isNull(at: 1) ? nil : Int(selectSession.integer(at: 1))
        return (Int(selectSession.integer(at: 0)), snapshot)
    }
}
