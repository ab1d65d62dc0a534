#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
import Locking

/// Copies the SQLite store's write-ahead log into its database file on a thread and a connection of its own, so that
/// the writer never stops for a checkpoint's reads, writes and syncs.
///
/// The writer asks for a checkpoint (``requestCheckpoint()``) once the log is long; this thread then runs passive
/// checkpoints, which wait for no other connection, until one copies the whole log (a few at most). The writer's
/// next commit after a whole copy starts the log again from its beginning (SQLite does that by itself), so the log
/// stays short while the writer goes on appending meanwhile. A checkpoint that fails (a full disk, a read-only file)
/// changes nothing and is asked for again by the writer after a later batch.
final class WALCheckpointer: @unchecked Sendable {
    // @unchecked Sendable: `connection` is used by the checkpointer's thread alone once `start()` handed it over
    // (pthread_create orders the two), and dropped by that thread when it ends. What callers share with it is in
    // `state`, a Monitor.

    private struct State {
        var isRequested = false
        var isClosing = false
        var thread: pthread_t?
        var checkpointCount = 0
    }

    private let state = Monitor(State())
    /// The checkpointer's connection: nil once its thread ended.
    private var connection: SQLiteConnection?

    /// A checkpointer for the store file at `path`, opened and configured like the writer's connection (the same
    /// `synchronous`, which decides whether a checkpoint syncs the file).
    /// - Parameters:
    ///   - path: the store's file, which the writer's connection has already opened and set up.
    ///   - durability: the store's durability.
    init(path: String, durability: SessionDurability) throws(SessionStoreError) {
        let connection = try SQLiteConnection(path: path, create: false, readOnly: false)
        try SQLiteSchema.configure(connection, durability: durability)
        self.connection = connection
    }

    /// Starts the checkpointer's thread.
    func start() throws(SessionStoreError) {
        switch Threads.start({ self.run() }) {
        case .success(let thread): state.withLock { $0.thread = thread }
        case .failure(let error):
            throw SessionStoreError(.unavailable, "cannot start the checkpoint thread: \(error)")
        }
    }

    /// Asks for a checkpoint; returns at once. Asking again before it ran asks for one checkpoint only.
    func requestCheckpoint() {
        let isFirst = state.withLock { state -> Bool in
            defer { state.isRequested = true }
            return !state.isRequested && !state.isClosing
        }
        if isFirst { state.signal() }
    }

    /// How many checkpoints ran to their end (each one copies what the log held when it began).
    var checkpointCount: Int { state.withLock { $0.checkpointCount } }

    /// Ends the thread (a checkpoint under way finishes first) and waits for it; its connection closes with it.
    /// Closing again is harmless.
    func close() {
        let (thread, isFirst) = state.withLock { state in
            defer {
                state.isClosing = true
                state.thread = nil
            }
            return (state.thread, !state.isClosing)
        }
        state.broadcast()
        if isFirst, let thread { pthread_join(thread, nil) }
    }

    private func run() {
        while true {
            let isClosing = state.withLock(when: { $0.isRequested || $0.isClosing }) { state -> Bool in
                state.isRequested = false
                return state.isClosing
            }
            if isClosing { break }
            checkpointUntilCopied()
        }
        connection = nil
    }

    /// Runs passive checkpoints until one copies the whole log, ``passesPerRequest`` at most: the writer appends while
    /// each runs, and a reader holding an old snapshot keeps frames from being copied.
    private func checkpointUntilCopied() {
        guard let connection else { return }
        for _ in 0..<Self.passesPerRequest {
            let progress: SQLiteConnection.CheckpointProgress
            do throws(SessionStoreError) {
                progress = try connection.checkpoint()
            } catch {
                return
            }
            state.withLock { $0.checkpointCount += 1 }
            if progress.copiedFrames >= progress.logFrames { return }
        }
    }

    /// How many passive checkpoints one request runs at most, when each finds the writer has added frames meanwhile.
    private static let passesPerRequest = 4
}
