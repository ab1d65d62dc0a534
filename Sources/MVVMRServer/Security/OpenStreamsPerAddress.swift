import Locking

/// Counts the open event streams of each client address, so that one address cannot hold more than its
/// share of them (an event stream holds a connection, a buffer and a session's attention for as long as
/// the client keeps it open). Only addresses with an open stream have an entry.
final class OpenStreamsPerAddress: Sendable {
    /// The most open streams one address may hold.
    let limit: Int
    /// The open streams by address (internal: a test holds it to stop a stream between finding its session and
    /// attaching to it).
    let counts = Locked<[String: Int]>([:])

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Counts one more open stream for `address`, unless it already holds `limit`.
    /// - Returns: whether the stream may open (then ``release(_:)`` must follow when it ends).
    func acquire(_ address: String) -> Bool {
        counts.withLock { counts in
            let open = counts[address, default: 0]
            guard open < limit else { return false }
            counts[address] = open + 1
            return true
        }
    }

    /// Counts one stream of `address` closed.
    func release(_ address: String) {
        counts.withLock { counts in
            guard let open = counts[address] else { return }
            counts[address] = open > 1 ? open - 1 : nil
        }
    }

    /// The open streams of `address`.
    func openStreams(of address: String) -> Int {
        counts.withLock { $0[address, default: 0] }
    }
}
