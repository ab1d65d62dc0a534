import Locking

/// The rows of the SQLite store's shared `log` table that are not yet moved into `records`, by session: where each
/// session's latest records are, without an index on the log.
///
/// Appends go to the end of `log`, one rowid table for every session, so a commit of many sessions' records writes
/// a few adjacent pages instead of one page per session. Once the log is long, the writer moves its oldest rows into
/// `records` (clustered by session and number) between batches, in one transaction that writes each session's page
/// once for the rows it gathered meanwhile (``WriterDatabase/moveLog(oldest:)``). Until then the rows are found
/// through this table, in memory, which the writer fills after each commit (before any append of it completes) and
/// trims after each move's commit, and which it builds from the file when it opens it or sees that another
/// connection wrote to it.
///
/// Readers look here before they begin their read transaction: a row whose append completed before the read is
/// listed here, or its move committed before this table dropped it, so the read finds it in one of the two tables.
/// Rows another program appended to the same file are not listed until this writer's next commit; a reader sees
/// that the log's highest rowid is past the highest listed here, and then scans the log for the session instead.
final class LogTail: Sendable {
    /// One session's rows in the log.
    struct SessionRows: Sendable, Equatable {
        /// The rows' rowids in `log` and record numbers, in number order.
        var rows: [Row] = []
        /// The latest activity time among them, seconds since 1970.
        var lastActive: Int64 = .min
        /// The highest record number appended to the log for the session: its last number, even once that row
        /// was removed (the fence never accepts a number twice).
        var lastNumber: Int?

        /// Adds a row a commit wrote.
        mutating func add(_ addition: Addition) {
            rows.append(addition.row)
            lastActive = max(lastActive, addition.lastActive)
            lastNumber = max(lastNumber ?? addition.row.number, addition.row.number)
        }
    }

    /// One row of the log.
    struct Row: Sendable, Equatable {
        /// Its rowid in `log`.
        let rowID: Int64
        /// The record's number in its session.
        let number: Int
    }

    /// A row of the log with its session, as one commit adds it.
    struct Addition: Sendable {
        /// The session's id.
        let session: String
        /// The row.
        let row: Row
        /// The input's time, seconds since 1970.
        let lastActive: Int64
    }

    private struct State {
        var sessions: [String: SessionRows] = [:]
        var rowCount = 0
        var highestRowID: Int64 = 0
    }

    private let state = Locked(State())

    /// How many rows the log holds now.
    var rowCount: Int { state.withLock { $0.rowCount } }

    /// The rows `session` has in the log (none: an empty value), and the highest rowid this table has been told of:
    /// a log whose highest rowid is greater has rows written since (by another program), which it does not list.
    func rows(of session: String) -> (rows: SessionRows, highestRowID: Int64) {
        state.withLock { ($0.sessions[session] ?? SessionRows(), $0.highestRowID) }
    }

    /// Every session with rows in the log, with them.
    func allSessions() -> [String: SessionRows] {
        state.withLock { $0.sessions }
    }

    /// Adds rows a commit wrote.
    func add(_ additions: [Addition]) {
        guard !additions.isEmpty else { return }
        state.withLock { state in
            for addition in additions {
                state.sessions[addition.session, default: SessionRows()].add(addition)
                state.highestRowID = max(state.highestRowID, addition.row.rowID)
            }
            state.rowCount += additions.count
        }
    }

    /// Takes in what a commit changed: it moved the rows up to `movedThrough` out of the log (nil: none), and each
    /// session of `sessions` has exactly the rows given (none: it leaves the table).
    func apply(_ sessions: [String: SessionRows], removingThrough movedThrough: Int64?) {
        guard movedThrough != nil || !sessions.isEmpty else { return }
        state.withLock { state in
            if let movedThrough {
                // The rows are in rowid order: the moved ones are a prefix of each session's. Found first, then
                // removed, so that the dictionary is not changed while it is walked.
                var moved: [(session: String, count: Int, all: Bool)] = []
                for (session, rows) in state.sessions {
                    let count = rows.rows.prefix { $0.rowID <= movedThrough }.count
                    if count > 0 { moved.append((session, count, count == rows.rows.count)) }
                }
                for entry in moved {
                    state.rowCount -= entry.count
                    if entry.all {
                        state.sessions[entry.session] = nil
                    } else {
                        state.sessions[entry.session]?.rows.removeFirst(entry.count)
                    }
                }
            }
            for (session, rows) in sessions {
                state.rowCount -= state.sessions[session]?.rows.count ?? 0
                if rows.rows.isEmpty {
                    state.sessions[session] = nil
                } else {
                    state.sessions[session] = rows
                    state.rowCount += rows.rows.count
                    state.highestRowID = max(state.highestRowID, rows.rows.last?.rowID ?? 0)
                }
            }
        }
    }

    /// Forgets every row: a move emptied the log.
    func removeAll() {
        state.withLock { state in
            state.sessions.removeAll(keepingCapacity: state.sessions.count < 4_096)
            state.rowCount = 0
        }
    }

    /// Replaces everything with what the log holds, as read from the file.
    func replace(with additions: [Addition]) {
        removeAll()
        add(additions)
    }
}
