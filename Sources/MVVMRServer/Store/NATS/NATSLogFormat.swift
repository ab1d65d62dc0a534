/// How the NATS store writes a session's log as messages of one subject, and reads it back.
///
/// Every message of a session's subject carries, in headers:
/// - `Mvvmr-Kind`: `record` (an input record, its JSON text as the payload), `snapshot` (a snapshot, its JSON text as
///   the payload) or `remove` (the numbers of records taken away, as the payload: `2,4,7-9`);
/// - `Mvvmr-Number`: the record's number, or the snapshot's (the last record it stands for);
/// - `Mvvmr-Last`: the highest record number the session has had after this message (the number fence's state:
///   removed records still count);
/// - `Mvvmr-Floor`: the number of the snapshot in force after this message (0: none);
/// - `Mvvmr-Owner`, on a claim only: the id of the node that claimed the session. A claim is a `remove` naming no
///   record (an empty payload), written, fenced, by a node that restores the session, so that no other node's
///   write can follow what it loaded; readers take it as the no-op it is;
/// - `Mvvmr-Previous`, on a claim only: the stream sequence of the subject's last message as the claiming node read
///   it.
///
/// So the last message alone tells a node where the session's fence stands (its stream sequence, `Mvvmr-Last`,
/// `Mvvmr-Floor`; unless it is a void claim, below), and the subject's messages, read in order, make the session.
///
/// **When the fence lets two writes through.** nats-server before 2.9.21 checks `Nats-Expected-Last-Subject-Sequence`
/// of a replicated stream before the write is agreed on, not as part of it (nats-server issue #4320): two writes
/// that name the same last message, a few milliseconds apart, may both be stored. On this store that happens when a
/// node claims a session at the moment its old copy on another node writes (a topic message reaches both at once).
/// Readers therefore take a log as the one chain the fence meant: a record whose number does not follow the chain's
/// last is void, and so is a claim that does not directly follow the message it names (another write came between:
/// the claiming node sees that, loads again and claims again). So one of two such writes is void, as the fence
/// would have made it, and what the claiming node then writes follows what the log holds. (Not every case: when
/// the old copy's write is still being agreed on while the claiming node checks its claim and writes its first
/// record, that record is the void one, though acknowledged; replay then finds the pages' digests different and
/// binds them fresh. nats-server 2.9.21 and later serialize the check and none of this happens.)
enum NATSLogFormat {
    static let kind = "Mvvmr-Kind"
    static let number = "Mvvmr-Number"
    static let last = "Mvvmr-Last"
    static let floor = "Mvvmr-Floor"
    static let owner = "Mvvmr-Owner"
    /// On a claim: the stream sequence of the message it was fenced on.
    static let previous = "Mvvmr-Previous"

    /// Whether `message` is a claim (see the type's notes).
    static func isClaim(_ message: NATSStreamMessage) -> Bool {
        message.headers[kind] == "remove" && message.headers[owner] != nil
    }

    /// Whether `claim` is void: it names a previous message other than `preceding`, the one before it on its
    /// subject (nil: none was read before it). A claim without the header (an older node's) stands.
    static func isVoidClaim(_ claim: NATSStreamMessage, after preceding: NATSStreamMessage?) -> Bool {
        guard let named = claim.headers[previous].flatMap({ UInt64($0) }) else { return false }
        return named != (preceding?.sequence ?? 0)
    }

    /// The key a session id is written as, in subjects and bucket keys: the id itself when it is made of letters,
    /// digits, `-` and `_` only (every id the server makes is) and does not start with `=`; else `=` and the hex of
    /// its UTF-8 bytes (so any id, even an empty one, is a valid subject token and key).
    static func key(of session: String) -> String {
        let bytes = Array(session.utf8)
        if let first = bytes.first, first != UInt8(ascii: "="), bytes.allSatisfy(isPlain) { return session }
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = [UInt8(ascii: "=")]
        hex.reserveCapacity(1 + 2 * bytes.count)
        for byte in bytes {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 15)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// The session id a key stands for, or nil when it is no key of ``key(of:)``'s.
    static func session(ofKey key: Substring) -> String? {
        let bytes = Array(key.utf8)
        guard bytes.first == UInt8(ascii: "=") else { return bytes.allSatisfy(isPlain) && !bytes.isEmpty ? String(key) : nil }
        let digits = bytes.dropFirst()
        guard digits.count % 2 == 0 else { return nil }
        var decoded: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            decoded.append(high << 4 | low)
            index += 2
        }
        return String(validating: decoded, as: UTF8.self)
    }

    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// The headers of a message of `kind`.
    static func headers(kind: String, number: Int, last: Int, floor: Int) -> [(String, String)] {
        [(Self.kind, kind), (Self.number, String(number)), (Self.last, String(last)), (Self.floor, String(floor))]
    }

    /// Where a session's fence stands after `message`, its subject's last.
    static func fence(after message: NATSStreamMessage) throws(SessionStoreError) -> NATSFence {
        guard let last = message.headers[Self.last].flatMap({ Int($0) }), let floor = message.headers[Self.floor].flatMap({ Int($0) })
        else {
            throw SessionStoreError(.unavailable, "a message of \(message.subject) without the store's headers")
        }
        return NATSFence(lastNumber: last, floor: floor, sequence: message.sequence)
    }

    /// `numbers` as the payload of a `remove` message: ascending, runs written `first-last`.
    static func numberList(_ numbers: [Int]) -> [UInt8] {
        let sorted = Array(Set(numbers)).sorted()
        var parts: [String] = []
        var index = 0
        while index < sorted.count {
            var end = index
            while end + 1 < sorted.count, sorted[end + 1] == sorted[end] + 1 { end += 1 }
            parts.append(end == index ? String(sorted[index]) : "\(sorted[index])-\(sorted[end])")
            index = end + 1
        }
        return Array(parts.joined(separator: ",").utf8)
    }

    /// The numbers of a `remove` message's payload (what is unreadable is skipped).
    static func numbers(inList bytes: [UInt8]) -> Set<Int> {
        var numbers = Set<Int>()
        for part in String(decoding: bytes, as: UTF8.self).split(separator: ",") {
            let bounds = part.split(separator: "-", maxSplits: 1)
            guard let first = bounds.first.flatMap({ Int($0) }) else { continue }
            let last = bounds.count == 2 ? Int(bounds[1]) ?? first : first
            guard last >= first, last - first < 10_000_000 else { continue }
            for number in first...last { numbers.insert(number) }
        }
        return numbers
    }

    /// The session a subject's messages make, in stream order: the latest snapshot, and the records after it that no
    /// later `remove` took away; void writes (see the type's notes) are left out. Also where its fence stands: the
    /// chain's last number and snapshot, at the sequence of the last message (which the next write must name), with
    /// the sequences of its latest records. Nil when the messages are not the whole log up to the fence `through`
    /// stands for (another node's snapshot purged some while they were read): every record after the snapshot in
    /// force is a message of its own, removed or not, so the records read must follow each other without a gap,
    /// and each number from the snapshot's to the chain's last (at least the last message's `Mvvmr-Last`, unless
    /// that message is a void claim) must be there.
    static func session(_ id: String, from messages: [NATSStreamMessage], through fence: NATSFence) throws(SessionStoreError)
        -> (session: StoredSession, fence: NATSFence)?
    {
        var snapshot: StoredSnapshot?
        var records: [StoredRecord] = []
        var seen = Set<Int>()
        // The number of the chain's last record (nil until the first message read: what came before may be purged).
        var chainLast: Int?
        var recent: [NATSRecordSequence] = []
        var preceding: NATSStreamMessage?
        // Whether the message just read was a void claim (for the last one: its `Mvvmr-Last` is not the chain's).
        var lastIsVoidClaim = false
        for message in messages {
            defer { preceding = message }
            lastIsVoidClaim = false
            guard let number = message.headers[Self.number].flatMap({ Int($0) }),
                let last = message.headers[Self.last].flatMap({ Int($0) })
            else {
                throw SessionStoreError(.unavailable, "a message of \(message.subject) without the store's headers")
            }
            switch message.headers[Self.kind] {
            case "record":
                if let chainLast {
                    // A second write of a number the chain has got through the fence: it is void.
                    if number <= chainLast { continue }
                    // A gap: messages between were purged while these were read (another node's snapshot). Read again.
                    if number > chainLast + 1 { return nil }
                }
                chainLast = number
                seen.insert(number)
                recent.append(NATSRecordSequence(number: number, sequence: message.sequence))
                if number > (snapshot?.number ?? 0) {
                    records.append(StoredRecord(session: id, number: number, body: message.body))
                }
            case "snapshot":
                snapshot = StoredSnapshot(number: number, body: message.body)
                records.removeAll { $0.number <= number }
                chainLast = max(chainLast ?? last, number)
            case "remove":
                if isClaim(message) {
                    lastIsVoidClaim = isVoidClaim(message, after: preceding)
                    if !lastIsVoidClaim { chainLast = chainLast ?? last }
                    continue
                }
                let removed = numbers(inList: message.body)
                records.removeAll { removed.contains($0.number) }
                chainLast = chainLast ?? last
            default:
                throw SessionStoreError(.unavailable, "a message of \(message.subject) of an unknown kind")
            }
        }
        let floor = snapshot?.number ?? 0
        // The last message's own `Mvvmr-Last` counts too (a read that lost the records after a snapshot to a purge
        // still ends at that message), unless it is a void claim, whose header is not the chain's.
        let lastNumber = max(chainLast ?? fence.lastNumber, lastIsVoidClaim ? 0 : fence.lastNumber)
        guard floor == fence.floor, floor >= lastNumber || (floor + 1...lastNumber).allSatisfy(seen.contains) else {
            return nil
        }
        var chainFence = NATSFence(lastNumber: lastNumber, floor: floor, sequence: messages.last?.sequence ?? fence.sequence)
        for entry in recent.suffix(NATSFence.recentLimit) where entry.number > floor {
            chainFence.noteRecord(entry.number, at: entry.sequence)
        }
        return (StoredSession(snapshot: snapshot, records: records), chainFence)
    }
}

/// A record's number and its stream sequence.
struct NATSRecordSequence: Sendable, Equatable {
    let number: Int
    let sequence: UInt64
}

/// Where one session's number fence stands, as a node knows it: the highest record number it has had, the number of
/// its snapshot, and the stream sequence of its subject's last message (0: the subject has none), which the next
/// publish must name.
struct NATSFence: Sendable, Equatable {
    var lastNumber: Int
    var floor: Int
    var sequence: UInt64
    /// The last activity this node wrote to the bucket for it (nil: none known).
    var activity: Int64? = nil
    /// Set by a write whose outcome is not known, or that the fence refused: the node must read the fence again.
    var isStale = false
    /// The stream sequences of the session's latest records (at most ``recentLimit``), oldest first: where a
    /// snapshot's purge may stop (the first record after the snapshot).
    var recentRecords: [NATSRecordSequence] = []

    /// How many records' sequences a fence keeps.
    static let recentLimit = 16

    /// Notes that record `number` is at `sequence`, the session's last.
    mutating func noteRecord(_ number: Int, at sequence: UInt64) {
        recentRecords.append(NATSRecordSequence(number: number, sequence: sequence))
        if recentRecords.count > Self.recentLimit { recentRecords.removeFirst(recentRecords.count - Self.recentLimit) }
    }

    /// Where the purge after a snapshot up to record `number` (already written, at `snapshotSequence`) may stop:
    /// every message before it is covered by the snapshot. Nil when not known (the messages then stay until a later
    /// snapshot's purge; reading skips them).
    func purgeBoundary(forSnapshotThrough number: Int, at snapshotSequence: UInt64) -> UInt64? {
        if number >= lastNumber { return snapshotSequence }
        return recentRecords.first { $0.number == number + 1 }?.sequence
    }

    /// A session the store does not have (or no longer has).
    static let absent = NATSFence(lastNumber: 0, floor: 0, sequence: 0)

    /// Whether the session exists: record 1 creates it, deleting it ends it.
    var exists: Bool { lastNumber > 0 }
}
