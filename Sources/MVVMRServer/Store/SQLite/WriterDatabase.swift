/// The writer thread's connection and the statements it prepared once: writes a batch of requests in one
/// transaction, each behind the rules of ``SessionFence``.
final class WriterDatabase {
    private let connection: SQLiteConnection
    private let begin: SQLiteStatement
    private let commit: SQLiteStatement
    private let rollback: SQLiteStatement
    private let selectSession: SQLiteStatement
    private let insertSession: SQLiteStatement
    private let updateSession: SQLiteStatement
    private let insertRecord: SQLiteStatement
    private let updateSnapshot: SQLiteStatement
    private let deleteRecordsThrough: SQLiteStatement
    private let deleteRecord: SQLiteStatement
    private let touchSession: SQLiteStatement
    private let deleteSession: SQLiteStatement
    private let deleteRecords: SQLiteStatement

    /// Prepares the writer's statements on `connection`.
    init(connection: SQLiteConnection) throws(SessionStoreError) {
        self.connection = connection
        begin = try connection.prepare("BEGIN IMMEDIATE")
        commit = try connection.prepare("COMMIT")
        rollback = try connection.prepare("ROLLBACK")
        selectSession = try connection.prepare("SELECT last_number, snapshot_number FROM sessions WHERE id = ?1")
        insertSession = try connection.prepare(
            "INSERT INTO sessions (id, last_number, last_active) VALUES (?1, ?2, ?3)")
        updateSession = try connection.prepare("UPDATE sessions SET last_number = ?2, last_active = ?3 WHERE id = ?1")
        insertRecord = try connection.prepare("INSERT INTO records (session, number, body) VALUES (?1, ?2, ?3)")
        updateSnapshot = try connection.prepare("UPDATE sessions SET snapshot_number = ?2, snapshot = ?3 WHERE id = ?1")
        deleteRecordsThrough = try connection.prepare("DELETE FROM records WHERE session = ?1 AND number <= ?2")
        deleteRecord = try connection.prepare("DELETE FROM records WHERE session = ?1 AND number = ?2")
        touchSession = try connection.prepare("UPDATE sessions SET last_active = ?2 WHERE id = ?1")
        deleteSession = try connection.prepare("DELETE FROM sessions WHERE id = ?1")
        deleteRecords = try connection.prepare("DELETE FROM records WHERE session = ?1")
    }

    /// Writes `requests` in one transaction. Success: each request's own outcome, in order (a request refused by
    /// the fence wrote nothing and fails alone). Failure: SQLite failed, the whole transaction was rolled back.
    func write(_ requests: [WriteRequest]) -> Result<[Result<Void, SessionStoreError>], SessionStoreError> {
        // A rollback that failed last time leaves the transaction open; a new one could never begin.
        if connection.isInTransaction { try? rollback.run() }
        var outcomes: [Result<Void, SessionStoreError>] = []
        outcomes.reserveCapacity(requests.count)
        do throws(SessionStoreError) {
            try begin.run()
            // The batch's own view of each session's last number, so that records of one session chain.
            var lastNumbers: [String: Int] = [:]
            for request in requests {
                outcomes.append(try apply(request, lastNumbers: &lastNumbers))
            }
            try commit.run()
            return .success(outcomes)
        } catch {
            // SQLite rolls some failures back by itself (a full disk, for one); otherwise it is done here.
            if connection.isInTransaction { try? rollback.run() }
            return .failure(error)
        }
    }

    /// Makes one request's change. Returns its refusal by the fence; throws when SQLite fails.
    private func apply(
        _ request: WriteRequest, lastNumbers: inout [String: Int]
    ) throws(SessionStoreError) -> Result<Void, SessionStoreError> {
        switch request {
        case .append(let record, let lastActive):
            let lastNumber: Int
            if let known = lastNumbers[record.session] {
                lastNumber = known
            } else {
                lastNumber = try sessionNumbers(of: record.session)?.last ?? 0
            }
            if let refusal = SessionFence.refusal(toAppend: record, after: lastNumber) { return .failure(refusal) }
            try insertRecord.bind(record.session, at: 1)
            try insertRecord.bind(record.number, at: 2)
            try insertRecord.bind(record.body, at: 3)
            try insertRecord.run()
            let sessionRow = lastNumber == 0 ? insertSession : updateSession
            try sessionRow.bind(record.session, at: 1)
            try sessionRow.bind(record.number, at: 2)
            try sessionRow.bind(lastActive, at: 3)
            try sessionRow.run()
            lastNumbers[record.session] = record.number

        case .saveSnapshot(let snapshot, let session):
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

        case .removeRecords(let numbers, let session):
            for number in numbers {
                try deleteRecord.bind(session, at: 1)
                try deleteRecord.bind(number, at: 2)
                try deleteRecord.run()
            }

        case .touch(let session, let time):
            try touchSession.bind(session, at: 1)
            try touchSession.bind(time, at: 2)
            try touchSession.run()

        case .delete(let session):
            try deleteRecords.bind(session, at: 1)
            try deleteRecords.run()
            try deleteSession.bind(session, at: 1)
            try deleteSession.run()
            lastNumbers[session] = 0

        case .barrier:
            break

        case .pragma(let statement, let reply):
            reply(try connection.integer(statement))
        }
        return .success(())
    }

    /// The session's last record number and its snapshot's number, or nil when there is no such session.
    private func sessionNumbers(of session: String) throws(SessionStoreError) -> (last: Int, snapshot: Int?)? {
        defer { selectSession.reset() }
        try selectSession.bind(session, at: 1)
        guard try selectSession.step() else { return nil }
        let snapshot = selectSession.isNull(at: 1) ? nil : Int(selectSession.integer(at: 1))
        return (Int(selectSession.integer(at: 0)), snapshot)
    }
}
