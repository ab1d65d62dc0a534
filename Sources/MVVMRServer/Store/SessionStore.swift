/// One input record of a session as a store keeps it: the session's id, the record's number (1, 2, … within
/// the session, with no gaps) and its JSON text, which the store never interprets.
public struct StoredRecord: Sendable, Equatable {
    /// The session's id.
    public let session: String
    /// The record's number within the session: 1 for the first, each next one greater by one.
    public let number: Int
    /// The record as JSON text (see `InputRecord`).
    public let body: [UInt8]

    /// A record to append or as loaded.
    /// - Parameters:
    ///   - session: the session's id.
    ///   - number: its number within the session.
    ///   - body: its JSON text.
    public init(session: String, number: Int, body: [UInt8]) {
        self.session = session
        self.number = number
        self.body = body
    }
}

/// A compacted prefix of a session's log: a snapshot standing for every record up to `number`.
public struct StoredSnapshot: Sendable, Equatable {
    /// The last record number the snapshot stands for.
    public let number: Int
    /// The snapshot as JSON text.
    public let body: [UInt8]

    /// A snapshot standing for records 1 through `number`.
    /// - Parameters:
    ///   - number: the last record it stands for.
    ///   - body: its JSON text.
    public init(number: Int, body: [UInt8]) {
        self.number = number
        self.body = body
    }
}

/// Where a shared store's log of one session ended when it was read: what ``SessionStore/claim(_:asLoaded:)`` must
/// find unchanged. Opaque outside the store that made it.
public struct StoredLogPosition: Sendable, Hashable {
    /// The stream sequence of the log's last message (NATS: the subject's last).
    let sequence: UInt64
    /// The highest record number the session had had (the number fence), removed records included.
    let lastNumber: Int
    /// The number of the snapshot in force (0: none).
    let floor: Int
}

/// What a store holds of one session: its latest snapshot, if any, and every record after it, in order.
public struct StoredSession: Sendable, Equatable {
    /// The session's latest snapshot; records up to its number are gone.
    public let snapshot: StoredSnapshot?
    /// The records after the snapshot (or all of them), in number order.
    public let records: [StoredRecord]
    /// Where the log ended when it was read, for a store other nodes share (nil for one a node owns): a restore
    /// claims the session as of there. Not part of what the session holds: two loads of one log are equal.
    public let position: StoredLogPosition?

    /// A session as loaded.
    /// - Parameters:
    ///   - snapshot: its latest snapshot.
    ///   - records: the records after it, in order.
    ///   - position: where the log ended when it was read (shared stores).
    public init(snapshot: StoredSnapshot?, records: [StoredRecord], position: StoredLogPosition? = nil) {
        self.snapshot = snapshot
        self.records = records
        self.position = position
    }

    /// Whether both hold the same snapshot and records (wherever they were read).
    public static func == (left: StoredSession, right: StoredSession) -> Bool {
        left.snapshot == right.snapshot && left.records == right.records
    }

    /// The number of the session's last record (its snapshot's when no record follows it; 0 when empty).
    ///
    /// After `removeRecords` took the session's last record away, this is less than the number the store's
    /// fence last accepted, and appending `lastNumber + 1` is refused as out of order.
    public var lastNumber: Int { records.last?.number ?? snapshot?.number ?? 0 }
}

/// A node's claim of a session in a shared store (``SessionStore/claim(_:asLoaded:)``): where it stands among the
/// session's writes, so that a notice of an earlier claim, arriving late, drops no copy restored after it.
public struct SessionClaim: Sendable, Hashable {
    /// Grows with every write to the store (a stream's sequence number): of two claims of one session, the later
    /// has the greater. 0 when the store cannot tell.
    public let order: UInt64

    /// A claim whose place among the writes the store cannot tell (a store one node owns, or a notice from a node
    /// of an earlier version): every other claim counts as later than it, and it counts as later than any.
    public static let unordered = SessionClaim(order: 0)

    /// A claim at `order` among the store's writes.
    public init(order: UInt64) { self.order = order }

    /// Whether this claim, announced by another node, comes after the one a copy here was restored from (`held`;
    /// ``unordered`` for a copy made here, which no claim precedes): only then is the copy stale. A claim whose
    /// place is unknown is taken as later (dropping a copy costs a restore; keeping a stale one, stale reads).
    public func supersedes(_ held: SessionClaim) -> Bool { order == 0 || held.order < order }
}

/// When a session was last active, for ``SessionStore/touch(_:)``.
public struct SessionActivity: Sendable, Equatable {
    /// The session's id.
    public let session: String
    /// Its last activity, in seconds since 1970.
    public let time: Int64

    /// The session's last activity.
    /// - Parameters:
    ///   - session: the session's id.
    ///   - time: seconds since 1970.
    public init(session: String, time: Int64) {
        self.session = session
        self.time = time
    }
}

extension SessionStore {
    /// True: a store in this process or on this machine's disk is reached without a network.
    public var isAvailable: Bool { true }

    /// False: a store in this process or on this machine's disk is this node's alone.
    public var isShared: Bool { false }

    /// An ``SessionClaim/unordered`` claim, always granted: a store one node owns has no other node that could
    /// have written to the session since it was loaded.
    public func claim(_ session: String, asLoaded stored: StoredSession) throws(SessionStoreError) -> SessionClaim? {
        .unordered
    }

    /// Nothing: a store one node owns has no other node whose announcements could arrive.
    public func observeOwnership(_ handler: @escaping @Sendable (String, SessionClaim) -> Void) {}

    /// Records that `session` was last active at `time` (see ``touch(_:)``).
    /// - Parameters:
    ///   - session: the session's id.
    ///   - time: seconds since 1970.
    public func touch(_ session: String, at time: Int64) throws(SessionStoreError) {
        try touch([SessionActivity(session: session, time: time)])
    }
}

/// Why a store could not do what it was asked.
public struct SessionStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: String, Sendable, Equatable {
        /// The store cannot write or read now: disk full, read-only, corrupt or missing file, I/O error, or the
        /// store was closed (the message is then `closed`). A later call may succeed once the cause is gone.
        case unavailable
        /// An appended record's number is not one more than the session's last (a record before it failed, or
        /// another writer owns the session), or a snapshot does not fit the session's log: nothing was written.
        case outOfOrder
    }

    /// The kind of failure.
    public let kind: Kind
    /// What went wrong, for the log (the store's own words, e.g. SQLite's message).
    public let message: String

    /// A failure of `kind`.
    /// - Parameters:
    ///   - kind: the kind.
    ///   - message: what went wrong.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The kind and the message.
    public var description: String { "\(kind.rawValue): \(message)" }
}

/// How durable an appended record is before its append completes.
public enum SessionDurability: String, Sendable, Equatable, CaseIterable {
    /// Written to the operating system: survives the process being killed (`kill -9`), not a power loss.
    case process
    /// Flushed to the disk (`fsync`) at every commit: survives a power loss.
    case machine
}

/// Where sessions' input logs are kept, so a session can be restored by replaying them: the one seam between
/// the session core and its storage (memory, SQLite, later a distributed log).
///
/// Appends are queued and committed in groups (records of many sessions in one commit); each completes, in
/// the order queued, once its record is durable at the store's ``SessionDurability`` or has failed. A record
/// whose number is not the session's last plus one fails with ``SessionStoreError/Kind/outOfOrder`` and
/// writes nothing: that fence keeps a session's log gap-free even when an earlier append failed. Record 1
/// creates the session. `saveSnapshot`, `removeRecords`, `touch` and `delete` take effect after every append
/// queued before them, and return once they have; `load` sees every append that has completed.
///
/// Every method is safe to call from any thread. Completions may run on the store's own thread or, for a
/// store that completes at once, on the caller's; they must be quick and must not wait for the store (a
/// store may refuse such a call with `unavailable` rather than wait for itself).
public protocol SessionStore: AnyObject, Sendable {
    /// The durability an append has when it completes.
    var durability: SessionDurability { get }

    /// Whether the store keeps what is appended, so that a session can be restored from it. A store that does
    /// not (``TransientSessionStore``, `SESSION_STORE=memory`) is told nothing: the server keeps no log, so
    /// its sessions live in memory only and cost nothing to record.
    var keepsSessions: Bool { get }

    /// Queues `record` to be appended; `completion` runs once it is durable, or with why it is not.
    /// - Parameters:
    ///   - record: the record; its number must be the session's last plus one.
    ///   - lastActive: the time of the input, in seconds since 1970, kept as the session's last activity.
    ///   - completion: runs once, in queue order, with the outcome.
    func append(
        _ record: StoredRecord, lastActive: Int64,
        completion: @escaping @Sendable (Result<Void, SessionStoreError>) -> Void)

    /// What the store holds of `session`: nil when it has no such session.
    /// - Parameter session: the session's id.
    func load(_ session: String) throws(SessionStoreError) -> StoredSession?

    /// Replaces the records up to `snapshot.number` with `snapshot` (compaction), atomically.
    ///
    /// Throws `outOfOrder`, changing nothing, when the session is unknown, or the snapshot's number is past
    /// the session's last record or before the number of the snapshot it has (whose records are gone).
    /// - Parameters:
    ///   - snapshot: the snapshot; its number must not be past the session's last record.
    ///   - session: the session's id.
    func saveSnapshot(_ snapshot: StoredSnapshot, of session: String) throws(SessionStoreError)

    /// Removes the records with the given numbers (a released page's), keeping the session and its other
    /// records; the numbering goes on from the last one. Numbers it does not hold, and an unknown session,
    /// are ignored.
    /// - Parameters:
    ///   - numbers: the records' numbers.
    ///   - session: the session's id.
    func removeRecords(_ numbers: [Int], of session: String) throws(SessionStoreError)

    /// Records when each of `activity`'s sessions was last active (passivation: a sweep passivates many at
    /// once, in one commit). An unknown session is ignored (a touch creates none).
    /// - Parameter activity: the sessions, each with its time in seconds since 1970.
    func touch(_ activity: [SessionActivity]) throws(SessionStoreError)

    /// Deletes `session`: its records, its snapshot and its last activity. Deleting an unknown one is no error.
    /// - Parameter session: the session's id.
    func delete(_ session: String) throws(SessionStoreError)

    /// The ids of up to `limit` sessions last active before `time`, oldest first, ties by id (to expire them).
    /// - Parameters:
    ///   - time: seconds since 1970.
    ///   - limit: how many at most.
    func sessions(lastActiveBefore time: Int64, limit: Int) throws(SessionStoreError) -> [String]

    /// How many sessions the store holds.
    func sessionCount() throws(SessionStoreError) -> Int

    /// Whether the store can be reached now (`/readyz` answers 503 while it cannot). A store on another machine
    /// says false while its connection is down; local stores are always available (the default).
    var isAvailable: Bool { get }

    /// Whether other nodes use the same store (and sweep its idle sessions too): a node then keeps the activity of
    /// the sessions it holds open with event streams fresh in it, so that no other node expires them.
    var isShared: Bool { get }

    /// Makes this node the holder of `session`, as `stored` (what it just loaded) shows it, before it restores a
    /// copy from it: nil when another node wrote to the session since it was loaded (load it again and claim
    /// again), the claim (where it stands among the session's writes) once it is written. From then on another
    /// node's append to the session, or its own claim, fails the fence unless it read the session again after the
    /// claim, and the other nodes are told (at most once, not waited for) to drop their copies (see
    /// ``observeOwnership(_:)``). So a restored copy never starts behind the store, which it could otherwise stay,
    /// serving stale reads and streams, until its next write. A node that misses the notice cannot accept an input
    /// on its stale copy either: the fence refuses it.
    /// - Parameters:
    ///   - session: the session's id.
    ///   - stored: what ``load(_:)`` returned for it.
    /// - Throws: `unavailable` when the store cannot be reached (or did not answer: the claim may have been
    ///   written; a later load reads it).
    func claim(_ session: String, asLoaded stored: StoredSession) throws(SessionStoreError) -> SessionClaim?

    /// Calls `handler` with the id of every session another node announced it now holds, and that node's claim, so
    /// that this node drops its own copy rather than serve stale reads from it, unless its copy was restored from a
    /// later claim (``SessionClaim/supersedes(_:)``): a notice may arrive after this node claimed the session back.
    /// - Parameter handler: runs on the store's own thread; it must be quick and must not wait for the store.
    func observeOwnership(_ handler: @escaping @Sendable (String, SessionClaim) -> Void)

    /// Returns once every append queued before the call has completed (at once when closed).
    func flush()

    /// Completes what is queued, then closes the store; later calls fail with `unavailable("closed")`, and
    /// later appends complete with it at once. Closing again is harmless.
    func close()
}
