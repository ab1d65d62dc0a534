@testable import MVVMRServer

/// A test's store that wraps another and changes one or two of its operations: everything it does not implement
/// itself goes to `inner`.
protocol ForwardingSessionStore: SessionStore {
    /// The store wrapped.
    associatedtype Inner: SessionStore
    /// The store every operation not implemented here goes to.
    var inner: Inner { get }
}

extension ForwardingSessionStore {
    var durability: SessionDurability { inner.durability }
    var keepsSessions: Bool { inner.keepsSessions }
    var isAvailable: Bool { inner.isAvailable }
    var isShared: Bool { inner.isShared }

    func append(
        _ record: StoredRecord, lastActive: Int64,
        completion: @escaping @Sendable (Result<Void, SessionStoreError>) -> Void
    ) {
        inner.append(record, lastActive: lastActive, completion: completion)
    }
    func load(_ session: String) throws(SessionStoreError) -> StoredSession? { try inner.load(session) }
    func claim(_ session: String, asLoaded stored: StoredSession) throws(SessionStoreError) -> SessionClaim? {
        try inner.claim(session, asLoaded: stored)
    }
    func observeOwnership(_ handler: @escaping @Sendable (String, SessionClaim) -> Void) { inner.observeOwnership(handler) }
    func saveSnapshot(_ snapshot: StoredSnapshot, of session: String) throws(SessionStoreError) {
        try inner.saveSnapshot(snapshot, of: session)
    }
    func removeRecords(_ numbers: [Int], of session: String) throws(SessionStoreError) {
        try inner.removeRecords(numbers, of: session)
    }
    func touch(_ activity: [SessionActivity]) throws(SessionStoreError) { try inner.touch(activity) }
    func delete(_ session: String) throws(SessionStoreError) { try inner.delete(session) }
    func sessions(lastActiveBefore time: Int64, limit: Int) throws(SessionStoreError) -> [String] {
        try inner.sessions(lastActiveBefore: time, limit: limit)
    }
    func sessionCount() throws(SessionStoreError) -> Int { try inner.sessionCount() }
    func flush() { inner.flush() }
    func close() { inner.close() }
}
