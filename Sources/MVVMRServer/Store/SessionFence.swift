/// The rules every store enforces on a session's log, as functions of what the session holds, so that the
/// memory store and the SQLite store cannot drift apart.
enum SessionFence {
    /// Why `record` may not be appended to a session whose last record is `lastNumber` (0: no such session),
    /// or nil when it may: its number must be exactly one more.
    static func refusal(toAppend record: StoredRecord, after lastNumber: Int) -> SessionStoreError? {
        guard lastNumber < Int.max, record.number == lastNumber + 1 else {
            return .outOfOrder(
                "record \(record.number) of session \(record.session) does not follow "
                    + (lastNumber == 0 ? "an empty log (the first record is 1)" : "record \(lastNumber)"))
        }
        return nil
    }

    /// Why `snapshot` may not replace the start of `session`'s log, or nil when it may: the session must
    /// exist, and the snapshot may stand neither for records past its last one nor for fewer than the
    /// snapshot it already has (whose records are gone).
    /// - Parameters:
    ///   - snapshot: the new snapshot.
    ///   - session: the session's id, for the message.
    ///   - lastNumber: the session's last record number; nil when there is no such session.
    ///   - currentSnapshotNumber: the number of the session's snapshot; nil when it has none.
    static func refusal(
        toSave snapshot: StoredSnapshot, of session: String, lastNumber: Int?, currentSnapshotNumber: Int?
    ) -> SessionStoreError? {
        guard let lastNumber else { return .outOfOrder("no session \(session) to take a snapshot of") }
        if snapshot.number > lastNumber {
            return .outOfOrder(
                "a snapshot up to record \(snapshot.number) of session \(session), whose last is \(lastNumber)")
        }
        let floor = currentSnapshotNumber ?? 0
        if snapshot.number < floor {
            return .outOfOrder(
                "a snapshot up to record \(snapshot.number) of session \(session), which has one up to \(floor)")
        }
        return nil
    }
}

extension SessionStoreError {
    /// The store was closed.
    static let closed = SessionStoreError(.unavailable, "closed")

    /// A record or snapshot out of the session's order.
    static func outOfOrder(_ message: String) -> SessionStoreError {
        SessionStoreError(.outOfOrder, message)
    }
}
