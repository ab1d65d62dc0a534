/// One change the SQLite store's writer thread makes, in queue order, inside its next transaction.
enum WriteRequest: Sendable {
    /// Append a record, behind the number fence.
    case append(StoredRecord, lastActive: Int64)
    /// Replace the start of a session's log with a snapshot.
    case saveSnapshot(StoredSnapshot, session: String)
    /// Remove some of a session's records.
    case removeRecords([Int], session: String)
    /// Set sessions' last activity.
    case touch([SessionActivity])
    /// Delete a session.
    case delete(session: String)
    /// Bring `sessions` up to date with the oldest rows of the log it does not account for (this many, or all; see
    /// ``LogTail``).
    case noteLog(oldest: Int)
    /// Delete the rows no chain reaches any more among the next rows of the noted log (this many; see
    /// ``WriterDatabase/sweepLog(maximumRows:)``).
    case sweepLog(rows: Int)
    /// Nothing: completes once everything queued before it has (`flush`).
    case barrier
    /// Run a pragma on the writer's connection and tell its first value (tests read the writer's settings, and
    /// fill the file by lowering `max_page_count`).
    case pragma(String, reply: @Sendable (Int64?) -> Void)

    /// Whether the request writes nothing, so a batch of only these needs no transaction.
    var writesNothing: Bool {
        if case .barrier = self { return true }
        return false
    }

}

/// A request in the writer's queue, with whom to tell how it went.
struct QueuedWrite: Sendable {
    /// What to do.
    let request: WriteRequest
    /// Called once, on the store's completion thread (``BatchCompleter``), in queue order.
    let completion: @Sendable (Result<Void, SessionStoreError>) -> Void
}
