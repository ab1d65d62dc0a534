/// The last events of one session, already framed for Server-Sent Events, kept for `Last-Event-ID`
/// replay. A ring buffer: appending never allocates once it is full.
struct EventLog {
    struct Entry {
        let sequence: Int
        let frame: [UInt8]
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

    mutating func append(sequence: Int, frame: [UInt8]) {
        if entries.count < capacity {
            entries.append(Entry(sequence: sequence, frame: frame))
        } else {
            entries[start] = Entry(sequence: sequence, frame: frame)
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
            if entry.sequence > sequence { frames.append(entry.frame) }
        }
        return frames
    }
}
