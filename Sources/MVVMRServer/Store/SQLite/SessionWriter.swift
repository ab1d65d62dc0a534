#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
import Locking

/// The SQLite store's one writer: a thread of its own that takes everything queued, writes it in one transaction
/// (group commit), and hands the batch to a ``BatchCompleter``, which completes each request in queue order on its own
/// thread while the writer goes on with the next batch.
///
/// A batch that fails in SQLite (a full disk, a read-only or corrupt file, an I/O error) is rolled back whole:
/// every request in it completes with `unavailable` and SQLite's message. The thread goes on, and the next batch
/// tries again, so the store recovers by itself once the cause is gone.
final class SessionWriter: @unchecked Sendable {
    // @unchecked Sendable: `database` is used by one thread at a time: by `init` until `start()` hands it to the
    // writer thread (pthread_create orders the two), then by that thread alone, which drops it when it ends.
    // What callers share with the thread is in `queue`, a Monitor.

    private struct Queue {
        var writes: [QueuedWrite] = []
        var isClosing = false
        /// The thread has done everything it will do (set by the thread itself, last).
        var hasStopped = false
        /// Tests hold the queue to gather requests into one batch.
        var isSuspended = false
        var commitCount = 0
        var noteCount = 0
        var sweepCount = 0
        var thread: pthread_t?
    }

    /// The writer's connection and its statements: nil once the thread has ended.
    private var database: WriterDatabase?
    private let queue = Monitor(Queue())
    /// How many rows the log may gain that `sessions` does not account for before the writer notes some there,
    /// between two batches.
    private let logNoteThreshold: Int
    /// How many of the oldest such rows one noting takes.
    private let logNoteSlice: Int
    /// How many rows the log gains between two sweeps of its dead rows.
    private let logSweepEvery: Int
    /// Copies the write-ahead log into the database file on its own thread, so that this one never waits for it (nil:
    /// this writer checkpoints itself).
    private let checkpointer: WALCheckpointer?
    /// Completes the committed batches, in order, on a thread of its own.
    private let completer = BatchCompleter()

    /// A writer for the store's file.
    /// - Parameters:
    ///   - connection: the writer's connection, configured, its tables ready.
    ///   - tail: where the log's rows are, shared with the reader.
    ///   - logNoteThreshold: how many rows the log may gain before some are noted in `sessions`.
    ///   - logNoteSlice: how many of the oldest such rows one noting takes.
    ///   - logSweepEvery: how many rows the log gains between two sweeps of its dead rows.
    ///   - checkpointFrames: how many frames the write-ahead log may hold before it is checkpointed.
    ///   - checkpointer: the thread that checkpoints the log (nil: the writer does, between batches).
    init(
        connection: SQLiteConnection, tail: LogTail, logNoteThreshold: Int, logNoteSlice: Int, logSweepEvery: Int,
        checkpointFrames: Int, checkpointer: WALCheckpointer?
    ) throws(SessionStoreError) {
        database = try WriterDatabase(connection: connection, tail: tail, checkpointFrames: checkpointFrames)
        self.checkpointer = checkpointer
        self.logNoteThreshold = logNoteThreshold
        self.logNoteSlice = max(1, logNoteSlice)
        self.logSweepEvery = max(1, logSweepEvery)
    }

    /// Starts the writer thread (and the checkpointer's).
    func start() throws(SessionStoreError) {
        try checkpointer?.start()
        do throws(SessionStoreError) {
            try completer.start()
        } catch {
            checkpointer?.close()
            throw error
        }
        let thread: pthread_t
        switch Threads.start({ self.run() }) {
        case .success(let started): thread = started
        case .failure(let error):
            checkpointer?.close()
            completer.close()
            throw SessionStoreError(.unavailable, "cannot start the writer thread: \(error)")
        }
        queue.withLock { $0.thread = thread }
    }

    /// How many batches the writer has committed (notings of the log not counted).
    var commitCount: Int { queue.withLock { $0.commitCount } }

    /// How many requests wait in the queue (tests see a batch gather while the queue is held).
    var queuedCount: Int { queue.withLock { $0.writes.count } }

    /// How many times the writer noted the log's latest rows in `sessions` between batches.
    var noteCount: Int { queue.withLock { $0.noteCount } }

    /// How many checkpoints the checkpointer's thread ran.
    var backgroundCheckpointCount: Int { checkpointer?.checkpointCount ?? 0 }

    /// How many times the writer swept the log's dead rows between batches (a round not begun counts too).
    var sweepCount: Int { queue.withLock { $0.sweepCount } }

    /// Queues `write`; completes it at once with `unavailable("closed")` when the store is closing.
    func enqueue(_ write: QueuedWrite) {
        enum Admission { case refused, queuedFirst, queuedBehindOthers }
        let admission: Admission = queue.withLock { queue in
            guard !queue.isClosing else { return .refused }
            queue.writes.append(write)
            return queue.writes.count == 1 ? .queuedFirst : .queuedBehindOthers
        }
        switch admission {
        case .refused: write.completion(.failure(.closed))
        // Only an empty queue can have the writer asleep; once it is awake it takes whatever is queued.
        case .queuedFirst: queue.signal()
        case .queuedBehindOthers: break
        }
    }

    /// Queues `request` and waits for its outcome.
    func perform(_ request: WriteRequest) -> Result<Void, SessionStoreError> {
        guard !isWriterThread && !completer.isCurrentThread else {
            // A completion waiting for the writer would wait for itself.
            return .failure(SessionStoreError(.unavailable, "called from a completion, on the store's own thread"))
        }
        let waiter = OutcomeWaiter()
        enqueue(QueuedWrite(request: request) { waiter.complete($0) })
        return waiter.wait()
    }

    /// Holds the queue: requests gather until `resume()` (tests make one batch of them so).
    func suspend() {
        queue.withLock { $0.isSuspended = true }
    }

    /// Lets the writer take what gathered while suspended.
    func resume() {
        queue.withLock { $0.isSuspended = false }
        queue.broadcast()
    }

    /// Completes what is queued, ends the thread (which closes its connection) and waits for it to end, and with it
    /// the completer's and the checkpointer's. Called from a completion, it returns at once and the threads end later.
    func close() {
        let (thread, isFirst) = queue.withLock { queue in
            defer { queue.isClosing = true }
            return (queue.thread, !queue.isClosing)
        }
        // Broadcast, not signal: a second caller of `close` may be waiting on the same condition.
        queue.broadcast()
        guard let thread else { return }
        // From a completion: the writer ends once it wrote what is queued, and the completer once it completed that.
        if pthread_equal(thread, pthread_self()) != 0 || completer.isCurrentThread {
            if isFirst { pthread_detach(thread) }
            return
        }
        if isFirst {
            pthread_join(thread, nil)
        } else {
            queue.withLock(when: { $0.hasStopped }) { _ in }
        }
    }

    private var isWriterThread: Bool {
        guard let thread = queue.withLock({ $0.thread }) else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    // MARK: - The writer thread

    private func run() {
        var lastBatchEnded = MonotonicClock.microseconds()
        while true {
            queue.withLock(when: { $0.isClosing || (!$0.isSuspended && !$0.writes.isEmpty) }) { _ in }
            // Under load (the last batch ended a moment ago) the writer lets the request threads queue more before it
            // takes the batch: one commit then carries many records instead of one each, which costs fewer pages
            // written and fewer wake-ups per record. An idle store commits at once.
            if MonotonicClock.microseconds() - lastBatchEnded < SessionWriter.busyWindowMicroseconds {
                usleep(SessionWriter.gatheringMicroseconds)
            }
            let (batch, isClosing) = queue.withLock { queue in
                // Suspended meanwhile (tests): the batch waits for `resume()`.
                if queue.isSuspended && !queue.isClosing { return ([QueuedWrite](), false) }
                defer { queue.writes = [] }
                return (queue.writes, queue.isClosing)
            }
            if batch.isEmpty && !isClosing { continue }
            if batch.isEmpty && isClosing { break }
            completer.complete(batch, with: write(batch))
            noteLogIfLong()
            sweepLogIfDue()
            database?.checkpointIfDue(by: checkpointer)
            lastBatchEnded = MonotonicClock.microseconds()
        }
        // Every batch's completions run before the store counts as closed.
        completer.close()
        database = nil
        // Its last checkpoint finishes first; the file's last connection to close copies what is left.
        checkpointer?.close()
        // A second `close()` waits for this (the first joins the thread, or, from a completion, joins nothing).
        queue.withLock { $0.hasStopped = true }
        queue.broadcast()
    }

    /// How soon after a batch a new one counts as load, which is worth gathering for.
    private static let busyWindowMicroseconds = 2_000
    /// How long the writer lets requests gather under load before it takes them.
    private static let gatheringMicroseconds: UInt32 = 100

    /// Notes the log's latest rows in `sessions` once `logNoteThreshold` rows came after the last noted one:
    /// after a batch was committed, while the completer sends its answers. A noting that fails leaves everything as
    /// it was (the rows stay in the tail) and is tried again after the next batch.
    private func noteLogIfLong() {
        guard let database, database.unnotedRowCount >= logNoteThreshold else { return }
        if case .success = database.noteLog(oldest: logNoteSlice) {
            queue.withLock { $0.noteCount += 1 }
        }
    }

    /// Sweeps dead rows out of the noted log once `logSweepEvery` rows were appended since the last sweep: after a
    /// batch was committed, like the noting. A sweep that fails deletes nothing and is tried again later.
    private func sweepLogIfDue() {
        guard let database, database.rowsAppendedSinceSweep >= logSweepEvery else { return }
        if case .success = database.sweepLog(maximumRows: 4 * logSweepEvery) {
            queue.withLock { $0.sweepCount += 1 }
        }
    }

    /// Writes `batch` in one transaction; returns each request's outcome, in order.
    private func write(_ batch: [QueuedWrite]) -> [Result<Void, SessionStoreError>] {
        guard let database else { return batch.map { _ in .failure(.closed) } }
        guard batch.contains(where: { !$0.request.writesNothing }) else { return batch.map { _ in .success(()) } }
        switch database.write(batch.map(\.request)) {
        case .success(let outcomes):
            queue.withLock { $0.commitCount += 1 }
            return outcomes
        case .failure(let failure):
            return batch.map { _ in .failure(failure) }
        }
    }
}
