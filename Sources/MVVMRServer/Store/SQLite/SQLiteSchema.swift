/// The SQLite store's tables, and how a connection is set up for them.
///
/// `sessions` is an ordinary rowid table and not WITHOUT ROWID: its rows carry the snapshot, which may be many
/// kilobytes, and SQLite's WITHOUT ROWID tables suit small rows only.
///
/// `log` (version 2) is where every record is kept: one rowid table for every session, appended at its end, so that
/// a commit of many sessions' records writes a few adjacent pages, not a page per session. The writer numbers its
/// rows itself (`seq`) and never uses a number twice, even once rows were deleted: `log_state` keeps the highest
/// one it indexed. (AUTOINCREMENT would do the same at the cost of a page written at every commit.) A record stays
/// in the row it was appended to until its session drops it (a snapshot, a removal, a delete).
///
/// `log_index` (version 3) finds a session's rows: (session, number) to `seq`, clustered by session. The writer
/// fills it in bulk now and then (see ``LogTail``): the rows up to `log_state.moved_through` are indexed, those
/// after it are listed in memory until then (a few of them may be indexed already: see
/// ``WriterDatabase``'s `touch`). Its rows are small (no bodies), so filling it writes few pages. Version 2 moved
/// the bodies themselves into a table clustered by session (`records`): rewriting every busy session's pages at
/// each move cost the writer about as much as the appends did, and stalled every answer for tens of milliseconds.
enum SQLiteSchema {
    /// The schema version this build writes, kept in `PRAGMA user_version` (0: a new, empty file).
    static let version: Int64 = 3

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

    /// The statements that turn a version 2 file into version 3, keeping every record: the log's rows not yet moved
    /// go into `records` as version 2 would have moved them, then every record of `records` is appended to the log
    /// (numbered on from the highest `seq` used) and indexed, and `records` goes.
    static let logIndexTable = """
        INSERT OR REPLACE INTO records (session, number, body) SELECT session, number, body FROM log;
        INSERT INTO sessions (id, last_number, last_active)
            SELECT session, max(number), max(last_active) FROM log WHERE true GROUP BY session
            ON CONFLICT (id) DO UPDATE SET last_number = max(last_number, excluded.last_number),
                last_active = max(last_active, excluded.last_active);
        UPDATE log_state SET moved_through = max(moved_through, coalesce((SELECT max(seq) FROM log), 0));
        DELETE FROM log;
        CREATE TABLE log_index (
            session TEXT NOT NULL,
            number INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            PRIMARY KEY (session, number)
        ) WITHOUT ROWID;
        INSERT INTO log (seq, session, number, last_active, body)
            SELECT (SELECT moved_through FROM log_state) + row_number() OVER (ORDER BY r.session, r.number),
                r.session, r.number, coalesce(s.last_active, 0), r.body
            FROM records r LEFT JOIN sessions s ON s.id = r.session;
        INSERT INTO log_index (session, number, seq) SELECT session, number, seq FROM log;
        UPDATE log_state SET moved_through = max(moved_through, coalesce((SELECT max(seq) FROM log), 0));
        DROP TABLE records;
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
            // Version 1 files (and the tables just created) get the log, version 2 files the log's index: upgrades
            // that keep every record.
            if again <= 1 { try connection.execute(logTable + "PRAGMA user_version = 2;") }
            if again <= 2 { try connection.execute(logIndexTable + "PRAGMA user_version = 3;") }
            try connection.execute("COMMIT")
        } catch {
            if connection.isInTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
        try prepareTables(on: connection, mayCreate: false)
    }
}
