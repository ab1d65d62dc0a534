/// The SQLite store's tables, and how a connection is set up for them.
///
/// `sessions` is an ordinary rowid table and not WITHOUT ROWID: its rows carry the snapshot, which may be many
/// kilobytes, and SQLite's WITHOUT ROWID tables suit small rows only. `records` rows are small and always read by
/// session in number order, which their primary key clusters.
///
/// `log` (version 2) is where appends go: one rowid table for every session, appended at its end, so that a commit
/// of many sessions' records writes a few adjacent pages, not a page of `records` and a row of `sessions` for each
/// session. The writer moves the log into `records` and `sessions` now and then (see ``LogTail``); a session's
/// records are in `records`, in `log`, or (between a move's two steps, never seen by a reader) in both. The writer
/// numbers the log's rows itself (`seq`) and never uses a number twice, even after a move emptied the log: a move
/// keeps the highest it used in `log_state`. So a reader holding a row's number from before a move finds that row
/// or nothing. (AUTOINCREMENT would do the same at the cost of a page written at every commit.)
enum SQLiteSchema {
    /// The schema version this build writes, kept in `PRAGMA user_version` (0: a new, empty file).
    static let version: Int64 = 2

    /// The statements that add version 2's tables to a version 1 file.
    static let logTable = """
        CREATE TABLE log (
            seq INTEGER PRIMARY KEY,
            session TEXT NOT NULL,
            number INTEGER NOT NULL,
            last_active INTEGER NOT NULL,
            body BLOB NOT NULL
        );
        CREATE TABLE log_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            moved_through INTEGER NOT NULL
        );
        INSERT INTO log_state (id, moved_through) VALUES (1, 0);
        """

    /// The statements that create version 1.
    static let creation = """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY NOT NULL,
            last_number INTEGER NOT NULL,
            last_active INTEGER NOT NULL,
            snapshot_number INTEGER,
            snapshot BLOB
        );
        CREATE INDEX sessions_by_last_active ON sessions (last_active, id);
        CREATE TABLE records (
            session TEXT NOT NULL,
            number INTEGER NOT NULL,
            body BLOB NOT NULL,
            PRIMARY KEY (session, number)
        ) WITHOUT ROWID;
        PRAGMA user_version = 1;
        """

    /// Sets the connection up for the store: WAL mode, the durability's `synchronous`, a busy timeout.
    /// - Parameters:
    ///   - connection: a connection to the store's file.
    ///   - durability: what a commit must survive.
    static func configure(_ connection: SQLiteConnection, durability: SessionDurability) throws(SessionStoreError) {
        // Another process holding the file's write lock is waited for this long before a commit fails as busy.
        connection.setBusyTimeout(milliseconds: 5_000)
        // The first statement that reads the file: a file that is not SQLite fails here.
        let mode = try connection.text("PRAGMA journal_mode = WAL")
        guard mode?.lowercased() == "wal" else {
            throw SessionStoreError(
                .unavailable, "\(connection.path): cannot use write-ahead logging (journal mode \(mode ?? "unknown"))")
        }
        switch durability {
        // In WAL mode NORMAL syncs at checkpoints only: a commit is in the OS's hands and survives the process.
        case .process: try connection.execute("PRAGMA synchronous = NORMAL")
        // FULL syncs the log at every commit: it survives a power loss.
        case .machine: try connection.execute("PRAGMA synchronous = FULL")
        }
    }

    /// Creates the tables in a new file, or checks that an existing file's schema is one this build knows.
    /// - Parameters:
    ///   - connection: the writer's connection, configured.
    ///   - mayCreate: whether an empty file may be given the tables, or an older one upgraded (not when opened
    ///     read-only).
    static func prepareTables(on connection: SQLiteConnection, mayCreate: Bool) throws(SessionStoreError) {
        let found = try connection.integer("PRAGMA user_version") ?? 0
        if found == version { return }
        guard found < version else {
            throw SessionStoreError(
                .unavailable,
                "\(connection.path): schema version \(found) is newer than this build's (\(version)); "
                    + "update the server or use another file")
        }
        guard mayCreate || found > 0 else {
            throw SessionStoreError(.unavailable, "\(connection.path): no session store in the file (schema version 0)")
        }
        guard mayCreate else {
            throw SessionStoreError(
                .unavailable, "\(connection.path): schema version \(found) needs an upgrade, and the file is read-only")
        }
        // Looked at again inside a write transaction: another process may be creating the tables right now.
        try connection.execute("BEGIN IMMEDIATE")
        do throws(SessionStoreError) {
            let again = try connection.integer("PRAGMA user_version") ?? 0
            if again == 0 { try connection.execute(creation) }
            // Version 1 files (and the tables just created) get the log: an upgrade that keeps every record.
            if again <= 1 { try connection.execute(logTable + "PRAGMA user_version = 2;") }
            try connection.execute("COMMIT")
        } catch {
            if connection.isInTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
        try prepareTables(on: connection, mayCreate: false)
    }
}
