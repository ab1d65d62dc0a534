/// The SQLite store's tables, and how a connection is set up for them.
///
/// `log` (version 3) holds every record, of every session, in one rowid table in the order they were appended: a
/// commit of many sessions' records writes a few adjacent pages at the table's end, not a page per session. Each
/// row names the row of its session's previous record (`previous_seq`, 0 for none), so a session's records are a
/// chain, read newest first from its newest row; they are never copied or moved. The writer numbers the rows itself
/// (`seq`) and never uses a number twice: a transaction that deletes rows keeps the highest number used so far in
/// `log_state.highest_seq`, so that deleting the log's newest rows does not hand their numbers out again (a reader of
/// another program's store, which knows rows up to some number, would not look for a new row under it).
///
/// `sessions` has a row per session: its last number, its last activity, its snapshot, and `newest_seq`, its newest
/// row in the log. The writer brings these rows up to date for many sessions at once, now and then (see
/// ``LogTail``): `log_state.noted_through` is the highest `seq` they account for. The rows after it are listed in
/// memory by ``LogTail``. `sessions` is an ordinary rowid table and not WITHOUT ROWID: its rows carry the snapshot,
/// which may be many kilobytes, and SQLite's WITHOUT ROWID tables suit small rows only.
///
/// Versions 1 and 2 kept older records in a `records` table clustered by session, into which the writer copied the
/// log's rows in bulk; the copy was the writer's largest cost. Opening such a file upgrades it, keeping every record.
enum SQLiteSchema {
    /// The schema version this build writes, kept in `PRAGMA user_version` (0: a new, empty file).
    static let version: Int64 = 3

    /// Version 3's `log` and `log_state`, named with `suffix` (the upgrade builds them beside version 2's).
    private static func logTables(suffix: String) -> String {
        """
        CREATE TABLE log\(suffix) (
            seq INTEGER PRIMARY KEY,
            session TEXT NOT NULL,
            number INTEGER NOT NULL,
            last_active INTEGER NOT NULL,
            body BLOB NOT NULL,
            previous_seq INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE log_state\(suffix) (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            noted_through INTEGER NOT NULL,
            highest_seq INTEGER NOT NULL DEFAULT 0
        );
        """
    }

    /// The statements that create version 3 in an empty file.
    static let creation = """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY NOT NULL,
            last_number INTEGER NOT NULL,
            last_active INTEGER NOT NULL,
            snapshot_number INTEGER,
            snapshot BLOB,
            newest_seq INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX sessions_by_last_active ON sessions (last_active, id);
        \(logTables(suffix: ""))
        INSERT INTO log_state (id, noted_through) VALUES (1, 0);
        PRAGMA user_version = 3;
        """

    /// The statements that created version 1 (sessions, and their records clustered by session in `records`): kept so
    /// that the upgrade's tests can make such a file.
    static let versionOneCreation = """
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

    /// The statements that give a version 1 file (sessions and `records`) version 2's log, so that one upgrade
    /// takes both on to version 3.
    static let versionTwoLog = """
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

    /// The statements that upgrade a version 2 file to version 3, keeping every record: `records` (the older
    /// records, by session and number) and then the old log (the newer ones, in order) become the new log's rows,
    /// numbered from 1; each row is chained to its session's previous one; `sessions` learns each session's newest
    /// row among those that came from `records`, and the log's rows after them are left for ``LogTail``.
    static let upgradeFromVersionTwo = """
        ALTER TABLE sessions ADD COLUMN newest_seq INTEGER NOT NULL DEFAULT 0;
        \(logTables(suffix: "_v3"))
        INSERT INTO log_v3 (seq, session, number, last_active, body)
            SELECT row_number() OVER (ORDER BY origin, order_key, number), session, number, last_active, body FROM (
                SELECT 0 AS origin, records.session AS order_key, records.session, records.number,
                    coalesce(sessions.last_active, 0) AS last_active, records.body
                    FROM records LEFT JOIN sessions ON sessions.id = records.session
                UNION ALL
                SELECT 1, seq, session, number, last_active, body FROM log
            );
        UPDATE log_v3 SET previous_seq = chained.previous
            FROM (SELECT seq, lag(seq, 1, 0) OVER (PARTITION BY session ORDER BY seq) AS previous FROM log_v3) AS chained
            WHERE log_v3.seq = chained.seq AND chained.previous <> 0;
        INSERT INTO log_state_v3 (id, noted_through) VALUES (1, (SELECT count(*) FROM records));
        UPDATE sessions SET newest_seq = newest.seq
            FROM (SELECT session, max(seq) AS seq FROM log_v3
                WHERE seq <= (SELECT noted_through FROM log_state_v3) GROUP BY session) AS newest
            WHERE sessions.id = newest.session;
        DROP TABLE records;
        DROP TABLE log;
        DROP TABLE log_state;
        ALTER TABLE log_v3 RENAME TO log;
        ALTER TABLE log_state_v3 RENAME TO log_state;
        PRAGMA user_version = 3;
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
            if again == 0 {
                try connection.execute(creation)
            } else {
                // Version 1 files get version 2's log first, so that one upgrade keeps every record of both.
                if again == 1 { try connection.execute(versionTwoLog) }
                try connection.execute(upgradeFromVersionTwo)
            }
            try connection.execute("COMMIT")
        } catch {
            if connection.isInTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
        try prepareTables(on: connection, mayCreate: false)
    }
}
