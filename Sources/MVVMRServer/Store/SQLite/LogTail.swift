import Locking

/// The rows of the SQLite store's `log` table that `sessions` does not account for yet, by session: where each
/// session's latest records are, without an index on the log.
///
/// Appends go to the end of `log`, one rowid table for every session, so a commit of many sessions' records writes
/// a few adjacent pages instead of a page per session. Each row names its session's previous row, so a session's
/// records are a chain, read from its newest row. Once the log has gained many rows, the writer notes them in
/// `sessions` between batches, in one transaction that writes each session's row once, with its newest row, for
/// the rows it gained meanwhile (``WriterDatabase/noteLog(oldest:)``); the rows stay where they are. Until then
/// each session's newest row is found here, in memory, which the writer fills after each commit (before any append
/// of it completes) and trims after each noting's commit, and which it builds from the file when it opens it or
/// sees that another connection wrote to it.
///
/// Readers look here before they begin their read transaction: a row whose append completed before the read is
/// listed here, or its noting committed before this table dropped it, so the read finds the newest row here or in
/// `sessions`. Rows another program appended to the same file are not listed until this writer's next commit; a
/// reader looks for the session's rows past the highest rowid listed here, which are usually none.
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

    /// How many rows the tail lists now.
    var rowCount: Int { state.withLock { $0.rowCount } }

    /// The rows `session` has in the tail (none: an empty value), and the highest rowid this table has been told of:
    /// a log whose highest rowid is greater has rows written since (by another program), which it does not list.
    func rows(of session: String) -> (rows: SessionRows, highestRowID: Int64) {
        state.withLock { ($0.sessions[session] ?? SessionRows(), $0.highestRowID) }
    }

    /// Every session with rows in the tail, with them.
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

    /// Takes in what a commit changed: `sessions` accounts for the rows up to `notedThrough` from now on (nil: no
    /// change), and each session of `sessions` has exactly the rows given (none: it leaves the table).
    func apply(_ sessions: [String: SessionRows], removingThrough notedThrough: Int64?) {
        guard notedThrough != nil || !sessions.isEmpty else { return }
        state.withLock { state in
            if let notedThrough {
                // The rows are in rowid order: the noted ones are a prefix of each session's. Found first, then
                // removed, so that the dictionary is not changed while it is walked.
                var noted: [(session: String, count: Int, all: Bool)] = []
                for (session, rows) in state.sessions {
                    let count = rows.rows.prefix { $0.rowID <= notedThrough }.count
                    if count > 0 { noted.append((session, count, count == rows.rows.count)) }
                }
                for entry in noted {
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

    /// Replaces everything, in one step, with the rows read from the file, whose highest rowid is `highestRowID`
    /// (the rows up to it that are not among `additions` are accounted for in `sessions`).
    func replace(with additions: [Addition], highestRowID: Int64) {
        state.withLock { state in
            state.sessions.removeAll(keepingCapacity: state.sessions.count < 4_096)
            state.rowCount = additions.count
            state.highestRowID = highestRowID
            for addition in additions {
                state.sessions[addition.session, default: SessionRows()].add(addition)
                state.highestRowID = max(state.highestRowID, addition.row.rowID)
            }
        }
    }
}
