#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
import Locking

/// A ``SessionStore`` in one SQLite file, in write-ahead-log mode: sessions survive the process (and, at
/// `.machine` durability, a power loss).
///
/// Appends are queued and written by one writer thread, which commits everything queued in one transaction
/// (group commit); a completion thread then completes each append, in queue order, while the writer commits the next
/// batch, and a third thread copies the write-ahead log into the file (checkpoints). `saveSnapshot`,
/// `removeRecords`, `touch` and `delete` go through the same queue, so they are ordered with the session's
/// appends, and wait for their commit. `load`, `sessions(lastActiveBefore:limit:)` and `sessionCount()` read
/// on the caller's thread through a second connection: they do not wait behind queued appends, and see every
/// append that has completed.
///
/// When SQLite fails (a full disk, a read-only or corrupt file, an I/O error), every request of the batch
/// completes with `unavailable` and SQLite's message, and nothing of the batch is stored; the next batch tries
/// again, so the store recovers by itself once the cause is gone.
///
/// ```swift
/// let store = try SQLiteSessionStore(path: "/var/lib/mvvmr/sessions.sqlite", durability: .process)
/// store.append(StoredRecord(session: "s", number: 1, body: Array("{}".utf8)), lastActive: 0) { result in
///     // on the store's completion thread, once the record is committed
/// }
/// store.close()
/// ```
public final class SQLiteSessionStore: SessionStore {
    /// Ways to make the store fail, for its tests.
    struct TestingOptions {
        /// SQLite's `max_page_count` for the writer: the file cannot grow past this many pages (`SQLITE_FULL`).
        var maximumPageCount: Int?
        /// Opens the file read-only (`SQLITE_READONLY` at every write). The file must already be a store.
        var readOnly = false
        /// How many rows the log may gain that `sessions` does not account for before the writer notes some there.
        var logNoteThreshold = SQLiteSessionStore.defaultLogNoteThreshold
        /// How many of the oldest such rows one noting takes (`.max`: all of them).
        var logNoteSlice = SQLiteSessionStore.defaultLogNoteSlice
        /// How many rows the log gains between two sweeps of the rows no chain reaches any more.
        var logSweepEvery = SQLiteSessionStore.defaultLogSweepEvery
        /// How many frames the write-ahead log may hold before it is checkpointed.
        var checkpointFrames = SQLiteSessionStore.defaultCheckpointFrames
    }

    /// How many rows the log gains at most (plus one batch) before the writer notes them in `sessions` (see
    /// ``LogTail``): enough that each busy session's row is written once for many of its records, few enough that
    /// the tail, which a reopened file reads back, stays small.
    static let defaultLogNoteThreshold = 8_192

    /// How many of the rows not yet noted one noting takes, once there are ``defaultLogNoteThreshold``: all of them.
    static let defaultLogNoteSlice = Int.max

    /// How many rows the log gains between two sweeps of its dead rows (those a snapshot stands for): each sweep goes
    /// through twice as many rows (four times this at most), so that it goes round the log faster than the log grows.
    static let defaultLogSweepEvery = 1_024

    /// How many frames (pages) the write-ahead log holds before it is checkpointed: SQLite's own default (4 MiB at its 4
    /// KiB pages), but by the checkpointer's thread while the writer goes on, instead of inside a commit. (Checkpoints
    /// of a larger log took long enough to hold the writer up for hundreds of milliseconds when the writer ran them,
    /// and the longer the log, the longer each page's lookup in it.)
    static let defaultCheckpointFrames = 1_000

    /// The durability an append has when it completes.
    public let durability: SessionDurability

    /// It keeps every record in its file.
    public var keepsSessions: Bool { true }
    /// The database file's path.
    public let path: String

    private let writer: SessionWriter
    /// Where the shared log's rows are (see ``LogTail``).
    private let tail: LogTail
    /// The reading connection: nil once closed.
    private let reader: Locked<ReaderDatabase?>

    /// Opens the store in the SQLite file at `path`, creating the file and its directory when missing.
    /// - Parameters:
    ///   - path: the database file. SQLite keeps two more files beside it while open (`-wal`, `-shm`).
    ///   - durability: `.process` (`synchronous=NORMAL`: a commit survives the process being killed) or
    ///     `.machine` (`synchronous=FULL`: every commit is flushed to the disk).
    /// - Throws: `unavailable` when the file cannot be opened or created, is not an SQLite database, or holds a
    ///   newer schema than this build's.
    public convenience init(path: String, durability: SessionDurability) throws(SessionStoreError) {
        try self.init(path: path, durability: durability, testing: TestingOptions())
    }

    /// Opens the store with options for tests.
    init(path: String, durability: SessionDurability, testing: TestingOptions) throws(SessionStoreError) {
        self.durability = durability
        self.path = path
        if !testing.readOnly { try Self.createParentDirectory(of: path) }
        let writing = try SQLiteConnection(path: path, create: true, readOnly: testing.readOnly)
        try SQLiteSchema.configure(writing, durability: durability)
        try SQLiteSchema.prepareTables(on: writing, mayCreate: !testing.readOnly)
        if let pages = testing.maximumPageCount {
            _ = try writing.integer("PRAGMA max_page_count = \(pages)")
        }
        let tail = LogTail()
        self.tail = tail
        // A read-only file has no log to copy: its writer's checkpoints would fail, and so would a thread's.
        let checkpointer = testing.readOnly ? nil : try WALCheckpointer(path: path, durability: durability)
        writer = try SessionWriter(
            connection: writing, tail: tail, logNoteThreshold: testing.logNoteThreshold,
            logNoteSlice: testing.logNoteSlice, logSweepEvery: testing.logSweepEvery,
            checkpointFrames: testing.checkpointFrames, checkpointer: checkpointer)
        let reading = try SQLiteConnection(path: path, create: false, readOnly: testing.readOnly)
        if !testing.readOnly { try reading.execute("PRAGMA query_only = ON") }
        reader = Locked(try ReaderDatabase(connection: reading, tail: tail))
        try writer.start()
    }

    deinit {
        close()
    }

    /// Queues `record`; `completion` runs on the store's completion thread once it is committed, or with why it is not.
    /// After `close()` it runs at once, on the caller's thread, with `unavailable("closed")`.
    /// - Parameters:
    ///   - record: the record; its number must be the session's last plus one (record 1 creates the session).
    ///   - lastActive: the time of the input, in seconds since 1970.
    ///   - completion: runs once, in queue order; quick, and never waiting for the store.
    public func append(
        _ record: StoredRecord, lastActive: Int64,
        completion: @escaping @Sendable (Result<Void, SessionStoreError>) -> Void
    ) {
        enqueue(.append(record, lastActive: lastActive), completion: completion)
    }

    /// Queues `request` without waiting for it (tests queue requests of every kind in one batch with it).
    func enqueue(_ request: WriteRequest, completion: @escaping @Sendable (Result<Void, SessionStoreError>) -> Void) {
        writer.enqueue(QueuedWrite(request: request, completion: completion))
    }

    /// What the file holds of `session`, read on the caller's thread: nil when it has no such session.
    /// - Parameter session: the session's id.
    public func load(_ session: String) throws(SessionStoreError) -> StoredSession? {
        try read { reader throws(SessionStoreError) in try reader.load(session) }
    }

    /// Replaces the records up to `snapshot.number` with `snapshot`, after the session's queued appends.
    /// - Parameters:
    ///   - snapshot: the snapshot; its number must not be past the session's last record, nor before the
    ///     snapshot it has.
    ///   - session: the session's id; an unknown one is `outOfOrder`.
    public func saveSnapshot(_ snapshot: StoredSnapshot, of session: String) throws(SessionStoreError) {
        try writer.perform(.saveSnapshot(snapshot, session: session)).get()
    }

    /// Removes the records with the given numbers, after the session's queued appends; numbers it does not
    /// hold, and unknown sessions, are ignored.
    /// - Parameters:
    ///   - numbers: the records' numbers.
    ///   - session: the session's id.
    public func removeRecords(_ numbers: [Int], of session: String) throws(SessionStoreError) {
        try writer.perform(.removeRecords(numbers, session: session)).get()
    }

    /// Records when each of `activity`'s sessions was last active, after their queued appends, in one
    /// transaction; unknown sessions are ignored. Waits for the commit.
    /// - Parameter activity: the sessions and their times.
    public func touch(_ activity: [SessionActivity]) throws(SessionStoreError) {
        guard !activity.isEmpty else { return }
        try writer.perform(.touch(activity)).get()
    }

    /// Deletes `session`, after its queued appends. Deleting an unknown one is no error.
    /// - Parameter session: the session's id.
    public func delete(_ session: String) throws(SessionStoreError) {
        try writer.perform(.delete(session: session)).get()
    }

    /// The ids of up to `limit` sessions last active before `time`, oldest first (ties by id).
    /// - Parameters:
    ///   - time: seconds since 1970.
    ///   - limit: how many at most.
    public func sessions(lastActiveBefore time: Int64, limit: Int) throws(SessionStoreError) -> [String] {
        try read { reader throws(SessionStoreError) in try reader.sessions(lastActiveBefore: time, limit: limit) }
    }

    /// How many sessions the file holds.
    public func sessionCount() throws(SessionStoreError) -> Int {
        try read { reader throws(SessionStoreError) in try reader.sessionCount() }
    }

    /// Returns once every request queued before the call has completed (at once after `close()`, or when called
    /// from a completion).
    public func flush() {
        _ = writer.perform(.barrier)
    }

    /// Completes what is queued, then closes the file; later calls fail with `unavailable("closed")`. Called from
    /// a completion, it returns at once and the file closes once that batch is done.
    public func close() {
        writer.close()
        reader.withLock { $0 = nil }
    }

    // MARK: - For tests

    /// How many batches the writer has committed (fewer than the appends when commits were grouped); the notings
    /// of the log between batches are counted apart, in `noteCount`.
    var commitCount: Int { writer.commitCount }

    /// How many times the writer noted the log's latest rows in `sessions` between batches.
    var noteCount: Int { writer.noteCount }

    /// How many times the writer swept the log's dead rows between batches.
    var sweepCount: Int { writer.sweepCount }

    /// How many rows the tail lists: rows of the log that `sessions` does not account for yet.
    var logRowCount: Int { tail.rowCount }

    /// How many requests wait in the writer's queue.
    var queuedWriteCount: Int { writer.queuedCount }

    /// Notes the whole log in `sessions` and then sweeps every dead row out of it, in queue order: tests look at the
    /// file after it. (The writer does both by itself, a slice at a time.)
    func noteAndSweepWholeLog() throws(SessionStoreError) {
        try writer.perform(.noteLog(oldest: .max)).get()
        // The first goes from where the sweep stopped to the end, the second round from the log's beginning.
        for _ in 1...2 { try writer.perform(.sweepLog(rows: .max)).get() }
    }

    /// How many checkpoints the checkpointer's thread ran (0 for a read-only file, which has none).
    var backgroundCheckpointCount: Int { writer.backgroundCheckpointCount }

    /// Holds the writer's queue until `resumeWriting()`, so that what is queued meanwhile makes one batch.
    func suspendWriting() {
        writer.suspend()
    }

    /// Lets the writer take what was queued while suspended, in one batch.
    func resumeWriting() {
        writer.resume()
    }

    /// Runs `statement`, a pragma, on the writer's connection in queue order, and returns its first value.
    /// - Parameter statement: e.g. `PRAGMA synchronous` or `PRAGMA max_page_count = 10`.
    func writerPragma(_ statement: String) throws(SessionStoreError) -> Int64? {
        let value = Locked<Int64?>(nil)
        try writer.perform(.pragma(statement, reply: { reply in value.withLock { $0 = reply } })).get()
        return value.withLock { $0 }
    }

    // MARK: - Private

    private func read<Value: Sendable>(
        _ body: (ReaderDatabase) throws(SessionStoreError) -> Value
    ) throws(SessionStoreError) -> Value {
        try reader.withLock { (reader) throws(SessionStoreError) -> Value in
            guard let reader else { throw .closed }
            return try body(reader)
        }
    }

    /// Creates the directories on the way to `path`'s file (as `mkdir -p` does).
    private static func createParentDirectory(of path: String) throws(SessionStoreError) {
        let components = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        var directory = path.hasPrefix("/") ? "" : "."
        for component in components where !component.isEmpty && component != "." {
            directory += "/" + component
            if mkdir(directory, 0o755) == 0 { continue }
            let failure = errno
            if failure == EEXIST && isDirectory(directory) { continue }
            let reason = failure == EEXIST ? "a file is in the way" : String(cString: strerror(failure))
            throw SessionStoreError(.unavailable, "\(path): cannot create the directory \(directory): \(reason)")
        }
    }

    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }
}
