/// The writer thread's connection and the statements it prepared once: writes a batch of requests in one
/// transaction, each behind the rules of ``SessionFence``, and now and then brings `sessions` up to date with the
/// log's latest rows (see ``LogTail``).
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
    private let selectTail: SQLiteStatement
    private let selectLogState: SQLiteStatement
    private let selectNoteWatermark: SQLiteStatement
    private let noteLogInSessions: SQLiteStatement
    private let advanceNotedThrough: SQLiteStatement
    private let keepHighestSeq: SQLiteStatement
    private let upsertSession: SQLiteStatement
    private let setNewestSeq: SQLiteStatement
    private let selectLink: SQLiteStatement
    private let setPreviousSeq: SQLiteStatement
    private let deleteLogRow: SQLiteStatement
    private let updateSnapshot: SQLiteStatement
    private let touchSession: SQLiteStatement
    private let deleteSession: SQLiteStatement
    private let selectSweepEnd: SQLiteStatement
    private let deleteDeadRows: SQLiteStatement
    /// `PRAGMA data_version` when the tail was last known to match the file: another connection's commit changes it.
    private var knownDataVersion: Int64?
    /// The `seq` the next row of the log gets (as committed: a transaction counts on from it in `TailChanges`).
    private var nextSeq: Int64 = 1
    /// The highest `seq` that `sessions` accounts for (as committed): the tail lists the rows after it.
    private var notedThrough: Int64 = 0
    /// How many frames the write-ahead log may hold before the writer checkpoints it.
    private let checkpointFrames: Int
    /// How many frames the write-ahead log held when the checkpointer was last asked to copy it (0: not since the log
    /// last started again from its beginning).
    private var framesAtCheckpointRequest = 0
    /// Where the sweep of the noted log goes on from (0: a new round starts at the log's beginning).
    private var sweptThrough: Int64 = 0
    /// `nextSeq` when the log was last swept: the rows appended since decide how far the next sweep goes.
    private var nextSeqAtLastSweep: Int64 = 1
    /// Whether the log may hold dead rows that no round of the sweep went past since they died (a snapshot or a
    /// deletion left them, or the file was just opened): only then does a new round begin.
    private var mayHaveDeadRows = true
    /// Whether a snapshot or a deletion committed since the present round began: its dead rows may lie behind it.
    private var rowsDiedDuringRound = false
    /// The highest `seq` a dead row may have: once a round that saw no row die ended with the noted log past it, the
    /// sweep has gone past every dead row. (Dead rows still in the tail wait for the noting and a later round.)
    private var deadRowsThrough: Int64 = 0

    /// How many rows were appended after the last that `sessions` accounts for, deleted ones included: at most
    /// the rows a reopened file lists in its tail (which leaves out those deleted and those a touch noted).
    var unnotedRowCount: Int { Int(nextSeq - 1 - notedThrough) }

    /// How many rows were appended since the log was last swept (see ``sweepLog(maximumRows:)``).
    var rowsAppendedSinceSweep: Int { Int(nextSeq - nextSeqAtLastSweep) }

    /// The end of a session's chain of records: its last number and its newest row.
    private struct ChainEnd {
        /// The session's last record number (0: none). It stays when its record is removed: the fence never
        /// accepts a number twice.
        var lastNumber: Int
        /// The `seq` of its newest row in the log (0: none).
        var newestSeq: Int64
    }

    /// What a transaction changes in the tail, applied once it commits: its own view of the log's rows.
    private struct TailChanges {
        /// `sessions` accounts for the log's rows up to this `seq`, from this transaction on (nil: unchanged).
        var notedThrough: Int64?
        /// The rows this transaction appended (after its last noting), not yet in `replaced`.
        var additions: [LogTail.Addition] = []
        /// The log's rows of every session whose rows this transaction removed, as they are now (its additions
        /// before the removal included): these replace the committed tail's once it commits.
        var replaced: [String: LogTail.SessionRows] = [:]
        /// The ends of the chains this transaction appended to, so that records of one session chain without a
        /// look at the file.
        var chainEnds: [String: ChainEnd] = [:]
        /// The `seq` the transaction's next row gets.
        var nextSeq: Int64
        /// Whether the transaction deleted rows of the log (then it keeps the highest `seq` used in `log_state`).
        var deletesRows = false
        /// Whether the transaction left rows that no chain reaches any more, for the sweep (a snapshot's, or those
        /// of a deleted session below a row the sweep took already).
        var leavesDeadRows = false
        /// Where the sweep goes on from once the transaction commits (nil: unchanged).
        var sweptThrough: Int64?

        /// The rows `session` has in the tail as this transaction sees it (for the rare changes that remove rows:
        /// it looks through the transaction's additions).
        func rows(of session: String, committed tail: LogTail) -> LogTail.SessionRows {
            var rows = replaced[session] ?? tail.rows(of: session).rows
            if let notedThrough { rows.rows.removeAll { $0.rowID <= notedThrough } }
            for addition in additions where addition.session == session { rows.add(addition) }
            return rows
        }

        /// Sets the session's rows as this transaction leaves them.
        mutating func replace(_ rows: LogTail.SessionRows, of session: String) {
            additions.removeAll { $0.session == session }
            replaced[session] = rows
        }
    }

    /// Prepares the writer's statements on `connection` and reads the log's latest rows into `tail`.
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
        selectSession = try connection.prepare(
            "SELECT last_number, snapshot_number, newest_seq FROM sessions WHERE id = ?1")
        appendToLog = try connection.prepare(
            "INSERT INTO log (seq, session, number, last_active, body, previous_seq) VALUES (?5, ?1, ?2, ?3, ?4, ?6)")
        // The rows after the noted ones, less those a touch noted in their session's row since.
        selectTail = try connection.prepare(
            "SELECT seq, session, number, log.last_active FROM log LEFT JOIN sessions ON sessions.id = log.session "
                + "WHERE seq > ?1 AND seq > coalesce(sessions.newest_seq, 0) ORDER BY seq")
        // Where the tail starts, and the highest number the log has used.
        selectLogState = try connection.prepare(
            "SELECT noted_through, max(coalesce((SELECT max(seq) FROM log), 0), noted_through, highest_seq) "
                + "FROM log_state")
        // The `seq` that `count` rows after `?2` end at (none: the log has fewer).
        selectNoteWatermark = try connection.prepare(
            "SELECT seq FROM log WHERE seq > ?2 ORDER BY seq LIMIT 1 OFFSET ?1")
        // One upsert per session for all of its rows in the range: each session's row is written once. A session
        // whose row already accounts for its newest row of the range (a touch noted it) keeps its activity: the
        // touch set it after those rows.
        noteLogInSessions = try connection.prepare(
            "INSERT INTO sessions (id, last_number, last_active, newest_seq) "
                + "SELECT session, max(number), max(last_active), max(seq) FROM log WHERE seq > ?1 AND seq <= ?2 "
                + "GROUP BY session "
                + "ON CONFLICT (id) DO UPDATE SET last_number = max(last_number, excluded.last_number), "
                + "last_active = CASE WHEN excluded.newest_seq > newest_seq "
                + "THEN max(last_active, excluded.last_active) ELSE last_active END, "
                + "newest_seq = max(newest_seq, excluded.newest_seq)")
        advanceNotedThrough = try connection.prepare("UPDATE log_state SET noted_through = max(noted_through, ?1)")
        keepHighestSeq = try connection.prepare("UPDATE log_state SET highest_seq = max(highest_seq, ?1)")
        upsertSession = try connection.prepare(
            "INSERT INTO sessions (id, last_number, last_active, newest_seq) VALUES (?1, ?2, ?3, ?4) "
                + "ON CONFLICT (id) DO UPDATE SET last_number = max(last_number, excluded.last_number), "
                + "last_active = max(last_active, excluded.last_active), "
                + "newest_seq = max(newest_seq, excluded.newest_seq)")
        setNewestSeq = try connection.prepare("UPDATE sessions SET newest_seq = ?2 WHERE id = ?1")
        selectLink = try connection.prepare("SELECT number, previous_seq FROM log WHERE seq = ?1 AND session = ?2")
        setPreviousSeq = try connection.prepare("UPDATE log SET previous_seq = ?2 WHERE seq = ?1")
        deleteLogRow = try connection.prepare("DELETE FROM log WHERE seq = ?1")
        updateSnapshot = try connection.prepare("UPDATE sessions SET snapshot_number = ?2, snapshot = ?3 WHERE id = ?1")
        touchSession = try connection.prepare("UPDATE sessions SET last_active = ?2 WHERE id = ?1")
        deleteSession = try connection.prepare("DELETE FROM sessions WHERE id = ?1")
        // The `seq` that the next `?3` rows after `?1`, up to `?2`, end at (NULL: there are none), and how many there are.
        selectSweepEnd = try connection.prepare(
            "SELECT max(seq), count(*) FROM (SELECT seq FROM log WHERE seq > ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3)")
        // The rows of the range that no chain reaches: at or below their session's snapshot, or of a session that is
        // gone (every row noted has its session's row, until the session is deleted).
        deleteDeadRows = try connection.prepare(
            "DELETE FROM log WHERE seq > ?1 AND seq <= ?2 AND number <= coalesce("
                + "(SELECT coalesce(snapshot_number, 0) FROM sessions WHERE id = log.session), 9223372036854775807)")
        try readTailIfChanged()
        // A reopened file's rows were not appended since a sweep: the first one goes as far as a usual one.
        nextSeqAtLastSweep = nextSeq
        deadRowsThrough = nextSeq - 1
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
            if changes.deletesRows {
                try keepHighestSeq.bind(changes.nextSeq - 1, at: 1)
                try keepHighestSeq.run()
            }
            try commit.run()
        } catch {
            // SQLite rolls some failures back by itself (a full disk, for one); otherwise it is done here.
            if connection.isInTransaction { try? rollback.run() }
            return .failure(error)
        }
        // Our own commit changes no data_version of ours; only other connections' do.
        nextSeq = changes.nextSeq
        if let noted = changes.notedThrough { notedThrough = max(notedThrough, noted) }
        if let swept = changes.sweptThrough { sweptThrough = swept }
        if changes.leavesDeadRows {
            mayHaveDeadRows = true
            rowsDiedDuringRound = true
            deadRowsThrough = max(deadRowsThrough, nextSeq - 1)
        }
        tail.apply(changes.replaced, removingThrough: changes.notedThrough)
        tail.add(changes.additions)
        return .success(outcomes)
    }

    /// Copies the write-ahead log into the database file once it holds `checkpointFrames` frames: called between
    /// batches, so that no commit waits for the checkpoint's writes and syncs (SQLite's own checkpoint would run inside
    /// a commit). A failed checkpoint changes nothing and is tried again later.
    ///
    /// With a `checkpointer`, the copy runs on its thread and this one goes on; the writer copies the log itself only
    /// when it grew to ``inlineCheckpointFactor`` times as long all the same (the checkpointer could not catch up, or
    /// fails).
    /// - Parameter checkpointer: the thread that copies the log, if the store has one.
    ///
    /// Under a steady load the log rarely starts again from its beginning: that needs a checkpoint to have copied every
    /// frame with no commit after it, and the writer commits while the checkpointer copies. So the log stays long, and
    /// asking again after every batch would run a checkpoint (two syncs) for every few frames. The checkpointer is
    /// asked again only once the log grew by ``checkpointFrames`` / ``requestsPerThreshold`` frames since it was
    /// last asked.
    func checkpointIfDue(by checkpointer: WALCheckpointer?) {
        let frames = connection.walFrameCount
        if frames < framesAtCheckpointRequest { framesAtCheckpointRequest = 0 }
        guard frames >= checkpointFrames else { return }
        if let checkpointer, frames < checkpointFrames * Self.inlineCheckpointFactor {
            guard frames - framesAtCheckpointRequest >= checkpointFrames / Self.requestsPerThreshold else { return }
            framesAtCheckpointRequest = frames
            checkpointer.requestCheckpoint()
        } else {
            framesAtCheckpointRequest = 0
            _ = try? connection.checkpoint()
        }
    }

    /// How many times the checkpointer is asked while the log grows by ``checkpointFrames`` frames.
    static let requestsPerThreshold = 2

    /// How many times `checkpointFrames` the log may grow to while the checkpointer copies it, before the writer
    /// checkpoints it itself.
    static let inlineCheckpointFactor = 8

    /// Brings `sessions` up to date with the oldest `count` rows of the log it does not account for yet (all of
    /// them, when there are fewer), in one transaction of its own; the tail then drops them.
    func noteLog(oldest count: Int) -> Result<Void, SessionStoreError> {
        write([.noteLog(oldest: count)]).map { _ in () }
    }

    /// Deletes the dead rows among the next rows of the noted log, in one transaction of its own: twice as many rows
    /// as were appended since the last sweep, from where it stopped, so that the sweep goes round the log faster than
    /// the log grows and a dead row waits at most about one round.
    ///
    /// A snapshot only marks the rows it stands for as dead (their numbers are at or below the session's snapshot,
    /// where every read of the chain stops): deleting them one by one, each on a page of its own among the other
    /// sessions' rows, cost a page written per row. The sweep takes them in `seq` order instead, each page once,
    /// with all its dead rows. A round begins only while the log may hold dead rows the sweep has not gone past.
    /// - Parameter maximumRows: the most rows one sweep goes through (after another connection appended many, say),
    ///   so that no sweep holds the writer up for long.
    func sweepLog(maximumRows: Int) -> Result<Void, SessionStoreError> {
        let rows = min(max(1, rowsAppendedSinceSweep) * 2, max(1, maximumRows))
        nextSeqAtLastSweep = nextSeq
        if sweptThrough == 0 {
            guard mayHaveDeadRows else { return .success(()) }
            rowsDiedDuringRound = false
        }
        let result = write([.sweepLog(rows: rows)]).map { _ in () }
        // The round ended: it went past every dead row unless one died meanwhile or one is still in the tail. (A
        // sweep that failed changed nothing, and the rows wait for the next.)
        if case .success = result, sweptThrough == 0, !rowsDiedDuringRound, deadRowsThrough <= notedThrough {
            mayHaveDeadRows = false
        }
        return result
    }

    /// Makes one request's change. Returns its refusal by the fence; throws when SQLite fails.
    private func apply(
        _ request: WriteRequest, changes: inout TailChanges
    ) throws(SessionStoreError) -> Result<Void, SessionStoreError> {
        if case .append(let record, let lastActive) = request {
            let end = try chainEnd(of: record.session, changes: changes)
            if let refusal = SessionFence.refusal(toAppend: record, after: end.lastNumber) { return .failure(refusal) }
            try appendToLog.bind(record.session, at: 1)
            try appendToLog.bind(record.number, at: 2)
            try appendToLog.bind(lastActive, at: 3)
            try appendToLog.bind(record.body, at: 4)
            try appendToLog.bind(changes.nextSeq, at: 5)
            try appendToLog.bind(end.newestSeq, at: 6)
            try appendToLog.run()
            changes.additions.append(
                LogTail.Addition(
                    session: record.session, row: LogTail.Row(rowID: changes.nextSeq, number: record.number),
                    lastActive: lastActive))
            changes.chainEnds[record.session] = ChainEnd(lastNumber: record.number, newestSeq: changes.nextSeq)
            changes.nextSeq += 1
            return .success(())
        }
        switch request {
        case .append:
            break

        case .noteLog(let count):
            try noteLogInTransaction(oldest: count, changes: &changes)

        case .sweepLog(let rows):
            try sweepLogInTransaction(rows: rows, changes: &changes)

        case .saveSnapshot(let snapshot, let session):
            // The session's row says how far its log goes (its rows in the tail included) before the fence looks.
            try noteTailRows(of: session, changes: changes)
            let numbers = try sessionRow(of: session)
            if let refusal = SessionFence.refusal(
                toSave: snapshot, of: session, lastNumber: numbers?.lastNumber, currentSnapshotNumber: numbers?.snapshot)
            {
                return .failure(refusal)
            }
            try updateSnapshot.bind(session, at: 1)
            try updateSnapshot.bind(snapshot.number, at: 2)
            try updateSnapshot.bind(snapshot.body, at: 3)
            try updateSnapshot.run()
            // The records it stands for are the chain's oldest: every read of the chain stops at the snapshot's
            // number, and the sweep deletes their rows later, page by page (see `sweepLog(maximumRows:)`).
            changes.leavesDeadRows = true

        case .removeRecords(let numbers, let session):
            // Its row keeps the session's last number, even when the last record goes.
            try noteTailRows(of: session, changes: changes)
            let removed = Set(numbers)
            try removeRecords(of: session, changes: &changes, keepingFrom: numbers.min() ?? .max) {
                removed.contains($0)
            }

        case .touch(let activity):
            for entry in activity {
                // The session's rows leave the tail first (their activity would count again at the next noting),
                // and a session only the log had gets its row in `sessions`; an unknown one is ignored.
                try noteTailRows(of: entry.session, changes: changes)
                changes.replace(LogTail.SessionRows(), of: entry.session)
                try touchSession.bind(entry.session, at: 1)
                try touchSession.bind(entry.time, at: 2)
                try touchSession.run()
            }

        case .delete(let session):
            // The whole chain, dead rows included: a row of a deleted session left in the tail would bring its session
            // back at the next noting, so the walk must not stop at the snapshot. (It stops at a row the sweep took;
            // the older ones below it are noted already, and the sweep takes them as a gone session's.)
            try removeRecords(of: session, changes: &changes, keepingFrom: .min) { _ in true }
            try deleteSession.bind(session, at: 1)
            try deleteSession.run()
            changes.replace(LogTail.SessionRows(), of: session)
            changes.chainEnds[session] = ChainEnd(lastNumber: 0, newestSeq: 0)
            // The walk ends at a row the sweep took; the older rows it did not reach are the sweep's.
            changes.leavesDeadRows = true

        case .barrier:
            break

        case .pragma(let statement, let reply):
            reply(try connection.integer(statement))
        }
        return .success(())
    }

    /// The end of the session's chain as this transaction sees it: its last number (0: no such session) and its
    /// newest row (0: none).
    private func chainEnd(of session: String, changes: TailChanges) throws(SessionStoreError) -> ChainEnd {
        if let known = changes.chainEnds[session] { return known }
        // The tail's rows, as this transaction left them or as committed: its newest row is the session's newest
        // (the rows `sessions` accounts for are older), and noting them leaves them where they are.
        let rows = changes.replaced[session] ?? tail.rows(of: session).rows
        if let lastNumber = rows.lastNumber, let newest = rows.rows.last {
            return ChainEnd(lastNumber: lastNumber, newestSeq: newest.rowID)
        }
        // No rows in the tail (a tail's rows always come with their last number): the session's row knows the rest.
        let row = try sessionRow(of: session)
        return ChainEnd(
            lastNumber: max(rows.lastNumber ?? 0, row?.lastNumber ?? 0), newestSeq: row?.newestSeq ?? 0)
    }

    /// Writes what the session's rows in the tail say into its row in `sessions` (making the row for a session
    /// only the log has): its last number, last activity and newest row, never lowering any.
    private func noteTailRows(of session: String, changes: TailChanges) throws(SessionStoreError) {
        let rows = changes.rows(of: session, committed: tail)
        guard let lastNumber = rows.lastNumber, let newest = rows.rows.last else { return }
        try upsertSession.bind(session, at: 1)
        try upsertSession.bind(lastNumber, at: 2)
        try upsertSession.bind(rows.lastActive, at: 3)
        try upsertSession.bind(newest.rowID, at: 4)
        try upsertSession.run()
    }

    /// Deletes the session's records whose numbers `remove` picks, walking its chain from the newest row down to
    /// the first record kept below `lowest` (`.min`: to the chain's start, or to a row the sweep took already), and
    /// links each record kept to the next one kept below it (the session's row to its newest kept one). The walk goes
    /// through the rows a snapshot left dead too (the sweep's, unless this takes them first).
    private func removeRecords(
        of session: String, changes: inout TailChanges, keepingFrom lowest: Int, where remove: (Int) -> Bool
    ) throws(SessionStoreError) {
        var seq = try chainEnd(of: session, changes: changes).newestSeq
        // The nearest row kept above the walk (0: none yet, the session's row points down the chain).
        var keptAbove: Int64 = 0
        var linkBroken = false
        while seq != 0, let link = try link(at: seq, of: session) {
            if remove(link.number) {
                try deleteLogRow.bind(seq, at: 1)
                try deleteLogRow.run()
                changes.deletesRows = true
                linkBroken = true
            } else {
                if linkBroken { try relink(keptAbove, to: seq, of: session) }
                linkBroken = false
                keptAbove = seq
                if link.number < lowest { break }
            }
            // A link always points to an older row; one that does not (a damaged file) ends the walk.
            guard link.previous < seq else { break }
            seq = link.previous
        }
        if linkBroken { try relink(keptAbove, to: 0, of: session) }
        // Replaced even when none of its rows in the tail went: its additions in this transaction move into
        // `replaced`, where `chainEnd` finds them once the end it knew is forgotten.
        var rows = changes.rows(of: session, committed: tail)
        rows.rows.removeAll { remove($0.number) }
        changes.replace(rows, of: session)
        changes.chainEnds[session] = nil
    }

    /// One row of a session's chain: its record's number and the row before it (0: none); nil when there is no
    /// such row of the session.
    private func link(at seq: Int64, of session: String) throws(SessionStoreError) -> (number: Int, previous: Int64)? {
        defer { selectLink.reset() }
        try selectLink.bind(seq, at: 1)
        try selectLink.bind(session, at: 2)
        guard try selectLink.step() else { return nil }
        return (Int(selectLink.integer(at: 0)), selectLink.integer(at: 1))
    }

    /// Points the row at `seq` (0: the session's row, whose newest it then is) at `previous`.
    private func relink(_ seq: Int64, to previous: Int64, of session: String) throws(SessionStoreError) {
        let statement = seq == 0 ? setNewestSeq : setPreviousSeq
        if seq == 0 {
            try statement.bind(session, at: 1)
        } else {
            try statement.bind(seq, at: 1)
        }
        try statement.bind(previous, at: 2)
        try statement.run()
    }

    /// Deletes the dead rows among the next `rows` rows after `sweptThrough`, up to the last noted one. A sweep that
    /// reaches the last noted row ends the round: the next one begins a new round at the log's beginning (even while
    /// appends go on, which the sweep would otherwise chase for ever).
    private func sweepLogInTransaction(rows: Int, changes: inout TailChanges) throws(SessionStoreError) {
        let from = changes.sweptThrough ?? sweptThrough
        let end: Int64
        let reachesTheEnd: Bool
        do {
            defer { selectSweepEnd.reset() }
            try selectSweepEnd.bind(from, at: 1)
            try selectSweepEnd.bind(changes.notedThrough ?? notedThrough, at: 2)
            try selectSweepEnd.bind(rows, at: 3)
            guard try selectSweepEnd.step(), !selectSweepEnd.isNull(at: 0) else {
                changes.sweptThrough = 0
                return
            }
            end = selectSweepEnd.integer(at: 0)
            reachesTheEnd = selectSweepEnd.integer(at: 1) < rows
        }
        try deleteDeadRows.bind(from, at: 1)
        try deleteDeadRows.bind(end, at: 2)
        try deleteDeadRows.run()
        if connection.changeCount > 0 { changes.deletesRows = true }
        changes.sweptThrough = reachesTheEnd ? 0 : end
    }

    /// Writes into `sessions` what the oldest `count` rows of the log after `notedThrough` say (all of them, when
    /// there are fewer) inside the open transaction: one upsert per session.
    private func noteLogInTransaction(oldest count: Int, changes: inout TailChanges) throws(SessionStoreError) {
        let from = changes.notedThrough ?? notedThrough
        var watermark = changes.nextSeq - 1
        do {
            defer { selectNoteWatermark.reset() }
            try selectNoteWatermark.bind(max(0, count - 1), at: 1)
            try selectNoteWatermark.bind(from, at: 2)
            // Fewer rows: all of them, and past the numbers of rows deleted since, so that those are not counted
            // as rows to note again.
            if try selectNoteWatermark.step(), !selectNoteWatermark.isNull(at: 0) {
                watermark = selectNoteWatermark.integer(at: 0)
            }
        }
        guard watermark > from else { return }
        try noteLogInSessions.bind(from, at: 1)
        try noteLogInSessions.bind(watermark, at: 2)
        try noteLogInSessions.run()
        try advanceNotedThrough.bind(watermark, at: 1)
        try advanceNotedThrough.run()
        changes.notedThrough = watermark
        changes.additions.removeAll { $0.row.rowID <= watermark }
        for (session, rows) in changes.replaced {
            var kept = rows
            kept.rows.removeAll { $0.rowID <= watermark }
            changes.replaced[session] = kept
        }
    }

    /// Builds the tail from the log's rows after those `sessions` accounts for, and finds the next `seq`, when the
    /// file changed under another connection (or was just opened). Returns whether it did.
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
            defer { selectLogState.reset() }
            if try selectLogState.step() {
                notedThrough = selectLogState.integer(at: 0)
                // Never lower: a number this writer used stays used.
                nextSeq = max(nextSeq, selectLogState.integer(at: 1) + 1)
            }
        }
        defer { selectTail.reset() }
        try selectTail.bind(notedThrough, at: 1)
        var additions: [LogTail.Addition] = []
        while try selectTail.step() {
            additions.append(
                LogTail.Addition(
                    session: selectTail.text(at: 1),
                    row: LogTail.Row(rowID: selectTail.integer(at: 0), number: Int(selectTail.integer(at: 2))),
                    lastActive: selectTail.integer(at: 3)))
        }
        tail.replace(with: additions, highestRowID: nextSeq - 1)
        knownDataVersion = version
        return true
    }

    /// The session's row in `sessions`: its last record number, its snapshot's number and its newest row; nil when
    /// it has no row.
    private func sessionRow(
        of session: String
    ) throws(SessionStoreError) -> (lastNumber: Int, snapshot: Int?, newestSeq: Int64)? {
        defer { selectSession.reset() }
        try selectSession.bind(session, at: 1)
        guard try selectSession.step() else { return nil }
        let snapshot = selectSession.isNull(at: 1) ? nil : Int(selectSession.integer(at: 1))
        return (Int(selectSession.integer(at: 0)), snapshot, selectSession.integer(at: 2))
    }
}
