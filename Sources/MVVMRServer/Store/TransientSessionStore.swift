/// The store of `SESSION_STORE=memory`: it keeps nothing, so sessions live only in the server's memory (as
/// before sessions were logged) and a restart ends them. The server records no input for it (see
/// ``SessionStore/keepsSessions``), so it costs nothing on the action path; passivation and restore are off.
public final class TransientSessionStore: SessionStore {
    /// A store that keeps nothing.
    public init() {}

    /// Nothing is written, so nothing waits: as durable as the process.
    public var durability: SessionDurability { .process }

    /// It keeps nothing.
    public var keepsSessions: Bool { false }

    /// Completes at once; the record is dropped.
    public func append(
        _ record: StoredRecord, lastActive: Int64,
        completion: @escaping @Sendable (Result<Void, SessionStoreError>) -> Void
    ) {
        completion(.success(()))
    }

    /// Nil: it holds no session.
    public func load(_ session: String) throws(SessionStoreError) -> StoredSession? { nil }

    /// Does nothing.
    public func saveSnapshot(_ snapshot: StoredSnapshot, of session: String) throws(SessionStoreError) {}

    /// Does nothing.
    public func removeRecords(_ numbers: [Int], of session: String) throws(SessionStoreError) {}

    /// Does nothing.
    public func touch(_ activity: [SessionActivity]) throws(SessionStoreError) {}

    /// Does nothing.
    public func delete(_ session: String) throws(SessionStoreError) {}

    /// None: it holds no session.
    public func sessions(lastActiveBefore time: Int64, limit: Int) throws(SessionStoreError) -> [String] { [] }

    /// Zero.
    public func sessionCount() throws(SessionStoreError) -> Int { 0 }

    /// Returns at once.
    public func flush() {}

    /// Does nothing.
    public func close() {}
}
