import Locking

/// A ``SessionStore`` in process memory: cheap, and lost with the process. The store of tests and benchmarks.
///
/// Appends complete at once, on the caller's thread, before `append` returns. It enforces the same number fence
/// as every store, and after `close()` every call fails with `unavailable`.
///
/// ```swift
/// let store = MemorySessionStore()
/// store.append(StoredRecord(session: "s", number: 1, body: Array("{}".utf8)), lastActive: 0) { _ in }
/// let session = try store.load("s")  // one record
/// ```
public final class MemorySessionStore: SessionStore {
    /// What the store holds of one session.
    private struct Session {
        var lastNumber: Int
        var lastActive: Int64
        var snapshot: StoredSnapshot?
        var records: [StoredRecord]
    }

    private struct Contents {
        var sessions: [String: Session] = [:]
        var isClosed = false
    }

    private let contents = Locked(Contents())

    /// An empty store.
    public init() {}

    /// `.process`, the weakest durability there is a name for: the records are in fact lost with the process.
    public var durability: SessionDurability { .process }

    /// It keeps every record (in memory), so a passivated session can be restored.
    public var keepsSessions: Bool { true }

    /// Appends `record` at once and calls `completion` before returning, on the caller's thread.
    /// - Parameters:
    ///   - record: the record; its number must be the session's last plus one.
    ///   - lastActive: the time of the input, in seconds since 1970.
    ///   - completion: called with the outcome before `append` returns.
    public func append(
        _ record: StoredRecord, lastActive: Int64,
        completion: @escaping @Sendable (Result<Void, SessionStoreError>) -> Void
    ) {
        let refusal: SessionStoreError? = contents.withLock { contents in
            guard !contents.isClosed else { return .closed }
            let lastNumber = contents.sessions[record.session]?.lastNumber ?? 0
            if let refusal = SessionFence.refusal(toAppend: record, after: lastNumber) { return refusal }
            if lastNumber == 0 {
                contents.sessions[record.session] = Session(
                    lastNumber: record.number, lastActive: lastActive, snapshot: nil, records: [record])
            } else {
                contents.sessions[record.session]?.lastNumber = record.number
                contents.sessions[record.session]?.lastActive = lastActive
                contents.sessions[record.session]?.records.append(record)
            }
            return nil
        }
        completion(refusal.map { .failure($0) } ?? .success(()))
    }

    /// What the store holds of `session`: nil when it has no such session.
    /// - Parameter session: the session's id.
    public func load(_ session: String) throws(SessionStoreError) -> StoredSession? {
        try open { contents in
            contents.sessions[session].map { StoredSession(snapshot: $0.snapshot, records: $0.records) }
        }
    }

    /// Replaces the records up to `snapshot.number` with `snapshot`.
    /// - Parameters:
    ///   - snapshot: the snapshot; its number must not be past the session's last record, nor before the
    ///     snapshot it has.
    ///   - session: the session's id; an unknown one is `outOfOrder`.
    public func saveSnapshot(_ snapshot: StoredSnapshot, of session: String) throws(SessionStoreError) {
        let refusal: SessionStoreError? = try open { contents in
            let current = contents.sessions[session]
            if let refusal = SessionFence.refusal(
                toSave: snapshot, of: session, lastNumber: current?.lastNumber,
                currentSnapshotNumber: current?.snapshot?.number)
            {
                return refusal
            }
            contents.sessions[session]?.snapshot = snapshot
            contents.sessions[session]?.records.removeAll { $0.number <= snapshot.number }
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Removes the records with the given numbers; numbers it does not hold, and unknown sessions, are ignored.
    /// - Parameters:
    ///   - numbers: the records' numbers.
    ///   - session: the session's id.
    public func removeRecords(_ numbers: [Int], of session: String) throws(SessionStoreError) {
        let removed = Set(numbers)
        try open { contents in
            contents.sessions[session]?.records.removeAll { removed.contains($0.number) }
        }
    }

    /// Records when each of `activity`'s sessions was last active; unknown sessions are ignored.
    /// - Parameter activity: the sessions and their times.
    public func touch(_ activity: [SessionActivity]) throws(SessionStoreError) {
        try open { contents in
            for entry in activity { contents.sessions[entry.session]?.lastActive = entry.time }
        }
    }

    /// Deletes `session`, if the store has it.
    /// - Parameter session: the session's id.
    public func delete(_ session: String) throws(SessionStoreError) {
        try open { contents in
            contents.sessions[session] = nil
        }
    }

    /// The ids of up to `limit` sessions last active before `time`, oldest first (ties by id).
    /// - Parameters:
    ///   - time: seconds since 1970.
    ///   - limit: how many at most.
    public func sessions(lastActiveBefore time: Int64, limit: Int) throws(SessionStoreError) -> [String] {
        try open { contents in
            let idle = contents.sessions.filter { $0.value.lastActive < time }
                .map { (id: $0.key, lastActive: $0.value.lastActive) }
                .sorted { ($0.lastActive, $0.id) < ($1.lastActive, $1.id) }
            return idle.prefix(max(0, limit)).map(\.id)
        }
    }

    /// How many sessions the store holds.
    public func sessionCount() throws(SessionStoreError) -> Int {
        try open { contents in contents.sessions.count }
    }

    /// Returns at once: every append has completed before its call returned.
    public func flush() {}

    /// Forgets everything; later calls fail with `unavailable("closed")`.
    public func close() {
        contents.withLock { contents in
            contents.sessions = [:]
            contents.isClosed = true
        }
    }

    /// Runs `body` on the contents, or fails when the store is closed.
    private func open<Value: Sendable>(
        _ body: (inout Contents) -> Value
    ) throws(SessionStoreError) -> Value {
        let value: Value? = contents.withLock { contents in
            contents.isClosed ? nil : body(&contents)
        }
        guard let value else { throw .closed }
        return value
    }
}
