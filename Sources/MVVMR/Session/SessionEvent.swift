/// One change of a session, numbered in order: what the server streams over SSE and logs.
///
/// Every change goes through the event sink, whether a request caused it or not, and the result of
/// a request carries the events it caused; so `sequence` is the SSE event id and responses agree
/// with the stream.
public struct SessionEvent: Sendable, Hashable {
    /// What changed.
    public enum Kind: Sendable, Hashable {
        /// A page's view moved to a new revision.
        case patch(PagePatch)
        /// The navigation stack changed.
        case navigation(Navigation)
        /// A page was bound outside navigation (`GET /api/pages/{unit}`).
        case snapshot(PageSnapshot)
    }

    /// The session's event number: 1 for its first event, +1 for each after.
    public let sequence: Int
    /// What changed.
    public let kind: Kind

    /// An event.
    /// - Parameters:
    ///   - sequence: its number.
    ///   - kind: what changed.
    public init(sequence: Int, kind: Kind) {
        self.sequence = sequence
        self.kind = kind
    }
}
