import MVVMR

/// The last events of one session, kept for `Last-Event-ID` replay: at most ``Bounds/count`` events and at
/// most ``Bounds/bytes`` bytes of them, the oldest going first. The bounds are the server's, handed to each append
/// rather than kept in every session's log. Each entry's size is counted as it comes and
/// goes, so the log knows its bytes without walking itself.
///
/// An event is framed for Server-Sent Events only when a stream needs it: the log keeps the frame when a
/// stream was open to take it (counted exactly), and the event itself otherwise (counted by its
/// estimated frame size, framed on replay). A session nobody streams, the common case for a client that
/// only POSTs, never encodes a frame.
struct EventLog {
    /// A logged event: the event itself, or its frame with its sequence number (the event holds its own).
    enum Payload {
        case event(SessionEvent)
        case frame(sequence: Int, bytes: [UInt8])
    }

    /// One logged event and its size. An event is large (a navigation carries the page it shows), so the entry adds
    /// only its byte count to it: a session's first entry fits jemalloc's 192-byte class with its array's header.
    struct Entry {
        let payload: Payload
        let byteCount: Int

        /// The event's sequence number.
        var sequence: Int {
            switch payload {
            case .event(let event): return event.sequence
            case .frame(let sequence, _): return sequence
            }
        }
    }

    /// How much a log keeps: at most `count` events and `bytes` bytes of them (a server's, shared by its sessions).
    struct Bounds {
        /// The most events kept (at least 1).
        let count: Int
        /// The most bytes of events kept.
        let bytes: Int

        /// Bounds of `count` events (at least 1) and `bytes` bytes (at least 0).
        init(count: Int, bytes: Int = .max) {
            self.count = max(1, count)
            self.bytes = max(0, bytes)
        }
    }

    /// The kept entries are `entries[head...]`, oldest first; a dropped entry's slot is emptied at once and
    /// the slots are compacted away now and then, so dropping the oldest costs O(1) amortized.
    private var entries: [Entry] = []
    private var head = 0
    /// The bytes of the kept entries.
    private(set) var byteCount = 0
    /// The newest sequence number dropped (0 before any): a replay from before it can no longer be served.
    private var droppedThrough = 0

    /// The number of events kept.
    var count: Int { entries.count - head }

    /// The newest sequence number logged, or `nil` when empty.
    var newestSequence: Int? {
        count == 0 ? nil : entries.last?.sequence
    }

    /// Starts a log whose events up to `sequence` are gone (a session restored from a snapshot): a replay from
    /// before it can no longer be served.
    mutating func startAfter(_ sequence: Int) {
        droppedThrough = max(droppedThrough, sequence)
    }

    /// Logs an event not yet framed, counted as `byteCount` bytes (its frame's estimated size), then drops the
    /// oldest events beyond `bounds`.
    mutating func append(_ event: SessionEvent, byteCount: Int, within bounds: Bounds) {
        append(Entry(payload: .event(event), byteCount: byteCount), within: bounds)
    }

    /// Logs an event's frame, then drops the oldest events beyond `bounds`.
    mutating func append(sequence: Int, frame: [UInt8], within bounds: Bounds) {
        append(Entry(payload: .frame(sequence: sequence, bytes: frame), byteCount: frame.count), within: bounds)
    }

    private mutating func append(_ entry: consuming Entry, within bounds: Bounds) {
        byteCount += entry.byteCount
        entries.append(entry)
        // An event larger than the whole budget goes too: the log then no longer reaches back past it,
        // and a client resuming from before it gets snapshots, as for any event no longer kept.
        while count > bounds.count || (byteCount > bounds.bytes && count > 0) {
            // Read in place: a copy of the entry would retain its event only to release it again.
            let sequence = entries[head].sequence
            byteCount -= entries[head].byteCount
            droppedThrough = sequence
            // Emptied now, not at the next compaction: a dropped event's bytes go back at once.
            entries[head] = Entry(payload: .frame(sequence: sequence, bytes: []), byteCount: 0)
            head += 1
        }
        if head >= 64 && head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    /// The frames of every event after `sequence`, in order; `nil` when the log no longer reaches back that far
    /// (the caller then sends snapshots instead).
    func frames(after sequence: Int) -> [[UInt8]]? {
        guard sequence >= droppedThrough else { return nil }
        var frames: [[UInt8]] = []
        for entry in entries[head...] where entry.sequence > sequence {
            switch entry.payload {
            case .frame(_, let frame): frames.append(frame)
            case .event(let event): frames.append(event.frame)
            }
        }
        return frames
    }
}
