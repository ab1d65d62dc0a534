import MVVMR

/// The last events of one session, kept for `Last-Event-ID` replay. A ring buffer: appending never
/// allocates once it is full.
///
/// An event is framed for Server-Sent Events only when a stream needs it: the log keeps the frame when a
/// stream was open to take it, and the event itself otherwise (framed on replay). A session nobody
/// streams, the common case for a client that only POSTs, never encodes a frame.
struct EventLog {
    enum Payload {
        case event(SessionEvent)
        case frame([UInt8])
    }

    struct Entry {
        let sequence: Int
        let payload: Payload
    }

    let capacity: Int
    private var entries: [Entry] = []
    private var start = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The newest sequence number logged, or `nil` when empty.
    var newestSequence: Int? {
        entries.isEmpty ? nil : entries[(start + entries.count - 1) % entries.count].sequence
    }

    /// Logs an event not yet framed.
    mutating func append(_ event: SessionEvent) {
        append(Entry(sequence: event.sequence, payload: .event(event)))
    }

    /// Logs an event's frame.
    mutating func append(sequence: Int, frame: [UInt8]) {
        append(Entry(sequence: sequence, payload: .frame(frame)))
    }

    private mutating func append(_ entry: Entry) {
        if entries.count < capacity {
            entries.append(entry)
        } else {
            entries[start] = entry
            start = (start + 1) % capacity
        }
    }

    /// The frames of every event after `sequence`, in order; `nil` when the log no longer reaches back that far
    /// (the caller then sends snapshots instead).
    func frames(after sequence: Int) -> [[UInt8]]? {
        guard !entries.isEmpty else { return [] }
        let oldest = entries[start].sequence
        guard sequence >= oldest - 1 else { return nil }
        var frames: [[UInt8]] = []
        for offset in 0..<entries.count {
            let entry = entries[(start + offset) % entries.count]
            guard entry.sequence > sequence else { continue }
            switch entry.payload {
            case .frame(let frame): frames.append(frame)
            case .event(let event): frames.append(ProtocolEncoding.frame(event))
            }
        }
        return frames
    }
}
