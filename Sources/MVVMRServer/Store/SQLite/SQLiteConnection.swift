import CSQLite

/// One open SQLite database connection. Not thread-safe: one thread uses it at a time (the writer thread, or a
/// caller holding the reader's lock). Every failure comes back as ``SessionStoreError/Kind/unavailable`` with
/// SQLite's own message and the file's path.
final class SQLiteConnection {
    /// The connection's handle; valid until `close()`.
    let handle: OpaquePointer
    /// The database file's path, for messages.
    let path: String

    /// Opens the file at `path`.
    /// - Parameters:
    ///   - path: the database file.
    ///   - create: whether to create it when missing.
    ///   - readOnly: whether to open it read-only (then `create` is ignored).
    init(path: String, create: Bool, readOnly: Bool) throws(SessionStoreError) {
        self.path = path
        // NOMUTEX: SQLite's own per-connection mutex is not needed, as no two threads use one connection at once.
        var flags = SQLITE_OPEN_NOMUTEX
        if readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if create { flags |= SQLITE_OPEN_CREATE }
        }
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard let opened else {
            throw SessionStoreError(.unavailable, "\(path): \(String(cString: sqlite3_errstr(code)))")
        }
        guard code == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(opened))
            sqlite3_close_v2(opened)
            throw SessionStoreError(.unavailable, "\(path): \(message)")
        }
        handle = opened
        walFrames = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        walFrames.initialize(to: 0)
        sqlite3_extended_result_codes(handle, 1)
    }

    /// The frames in the write-ahead log after the last commit, once `countWALFrames()` installed the hook.
    private let walFrames: UnsafeMutablePointer<Int32>

    deinit {
        // close_v2: statements still alive (their own deinit finalizes them) keep the connection until they go.
        // Closing runs no hook, so the counter may go with it.
        sqlite3_wal_hook(handle, nil, nil)
        sqlite3_close_v2(handle)
        walFrames.deallocate()
    }

    /// Turns SQLite's automatic checkpoint off for this connection and counts the write-ahead log's frames instead
    /// (``walFrameCount``), so that the caller checkpoints when it chooses (``checkpoint()``).
    func countWALFrames() {
        walFrames.pointee = 0
        mvvmr_sqlite_count_wal_frames(handle, walFrames)
    }

    /// The frames in the write-ahead log after this connection's last commit (see `countWALFrames()`).
    var walFrameCount: Int { Int(walFrames.pointee) }

    /// How far a checkpoint got: the frames the write-ahead log held, and how many of them are now in the database file.
    struct CheckpointProgress {
        /// The frames in the log when the checkpoint ran.
        let logFrames: Int
        /// How many of them the database file holds now (when all of them, the next commit starts the log again).
        let copiedFrames: Int
    }

    /// Copies the write-ahead log's frames into the database file (a passive checkpoint: it waits for no other
    /// connection), so that the log starts again from its beginning at the next commit once all were copied.
    @discardableResult
    func checkpoint() throws(SessionStoreError) -> CheckpointProgress {
        var logFrames: Int32 = 0
        var copiedFrames: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copiedFrames)
        guard code == SQLITE_OK else { throw failure(code) }
        walFrames.pointee = 0
        return CheckpointProgress(logFrames: Int(logFrames), copiedFrames: Int(copiedFrames))
    }

    /// How many rows the connection's last `INSERT`, `UPDATE` or `DELETE` changed.
    var changeCount: Int { Int(sqlite3_changes(handle)) }

    /// The failure SQLite just reported on this connection.
    /// - Parameter code: the result code it returned.
    func failure(_ code: Int32) -> SessionStoreError {
        let message = String(cString: sqlite3_errmsg(handle))
        let extended = sqlite3_extended_errcode(handle)
        return SessionStoreError(.unavailable, "\(path): \(message) (SQLite code \(extended == 0 ? code : extended))")
    }

    /// Runs one or more statements that return no rows the caller needs.
    /// - Parameter sql: the statements.
    func execute(_ sql: String) throws(SessionStoreError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw failure(code) }
    }

    /// Runs one statement and returns the first column of its first row as an integer (for pragmas).
    /// - Parameter sql: the statement.
    func integer(_ sql: String) throws(SessionStoreError) -> Int64? {
        let statement = try prepare(sql)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.integer(at: 0)
    }

    /// Runs one statement and returns the first column of its first row as text (for pragmas).
    /// - Parameter sql: the statement.
    func text(_ sql: String) throws(SessionStoreError) -> String? {
        let statement = try prepare(sql)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.text(at: 0)
    }

    /// Compiles `sql` into a statement to run many times.
    /// - Parameter sql: one statement.
    func prepare(_ sql: String) throws(SessionStoreError) -> SQLiteStatement {
        var compiled: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &compiled, nil)
        guard code == SQLITE_OK, let compiled else { throw failure(code) }
        return SQLiteStatement(handle: compiled, connection: self)
    }

    /// How long a statement waits for another connection's lock on the file before it fails as busy.
    func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// The rowid of the row the last successful INSERT on this connection added.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether a transaction is open (SQLite ends one by itself after some errors, such as a full disk).
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }
}
