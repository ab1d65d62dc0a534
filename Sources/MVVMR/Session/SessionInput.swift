import JSONPatch

/// One thing that entered a session's serial context from outside: what its log records, in order, so
/// that applying the same inputs to fresh pages gives the same views, revisions and event numbers.
///
/// Everything else a session does (routes, callbacks, what an action's streams compute) follows from
/// these inputs and is not recorded: replay computes it again.
public enum SessionInput: Sendable, Hashable {
    /// The session began (or began again with a `root` start) at `unit`; `seed` and `wallClock` (the wall
    /// clock's reading, since 1970, at the session clock's zero) are what its pages' `context.random` and
    /// `scheduler.wallClock` come from, so that they are the same on every replay.
    case start(unit: String, parameters: [String: String], value: JSONValue?, seed: UInt64, wallClock: Duration)
    /// A page outside the navigation stack was bound by a read (`GET /api/pages/{unit}`).
    case bind(unit: String, parameters: [String: String])
    /// An action on a live page; `clientRevision` is the revision the client said it held (it shapes the
    /// answer, not the state).
    case action(unit: String, name: String, value: JSONValue, clientRevision: Int?)
    /// A navigation the client asked for (`back`, `open`).
    case navigate(ClientNavigation)
    /// The timer with this ordinal (the session scheduler's numbering) fired.
    case timer(Int)
    /// The async job with this ordinal finished with this result.
    case work(Int, JSONValue)
    /// A page was bound fresh at `revision` in place of a live one of `unit` whose replay no longer matched its
    /// log (its code changed), or whose log passed the cap: see ``PageSession/restore(from:recordCap:replayed:)``.
    case rebind(unit: String, revision: Int)
    /// A value published on the topic `name` reached the session: every page subscribed to it received it
    /// (``UnitContext/messages(on:)``). Replay delivers the recorded value; nothing is subscribed live meanwhile.
    case topic(name: String, value: JSONValue)
}

extension SessionInput {
    /// Whether the input may bind pages afresh (a start, a read of a page not live, a navigation, a rebind).
    var bindsPages: Bool {
        switch self {
        case .start, .bind, .navigate, .rebind: return true
        case .action, .timer, .work, .topic: return false
        }
    }
}

/// A session input as its log keeps it: numbered, timed, and with a digest of what it caused on each page,
/// so a replay that comes out differently is noticed.
public struct InputRecord: Sendable, Hashable {
    /// The record's number in its session: 1 for the first input, each next one greater by one.
    public let number: Int
    /// The session clock's reading when the input was applied (time since the session's clock began).
    public let time: Duration
    /// The input.
    public let input: SessionInput
    /// For every page the input changed, bound or released, a digest (FNV-1a, 64 bits) of the events it
    /// caused on that page, in order.
    public let digests: [String: UInt64]
    /// Whatever the caller attached (a server keeps an action's idempotency key here); not interpreted.
    public let annotation: JSONValue?
    /// The session's latest event number once the input was applied.
    public let sequence: Int
    /// For every page the input changed or bound, its revision once the input was applied.
    public let revisions: [String: Int]

    /// A record as the session makes it, or as read back from a log.
    /// - Parameters:
    ///   - number: its number in the session.
    ///   - time: the session clock's reading.
    ///   - input: the input.
    ///   - digests: per page, the digest of the events the input caused there.
    ///   - annotation: the caller's attachment.
    ///   - sequence: the session's latest event number after the input.
    ///   - revisions: per page, its revision after the input.
    public init(
        number: Int, time: Duration, input: SessionInput, digests: [String: UInt64], annotation: JSONValue? = nil,
        sequence: Int = 0, revisions: [String: Int] = [:]
    ) {
        self.sequence = sequence
        self.revisions = revisions
        self.number = number
        self.time = time
        self.input = input
        self.digests = digests
        self.annotation = annotation
    }
}

/// A 64-bit FNV-1a digest, built from bytes and integers: cheap, stable across runs and machines (unlike
/// `Hasher`, which is seeded per process).
public struct StableDigest: Sendable, Hashable {
    /// The digest so far.
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    /// An empty digest.
    public init() {}

    /// Adds bytes.
    /// - Parameter bytes: the bytes, in order.
    public mutating func combine(_ bytes: some Sequence<UInt8>) {
        var current = value
        for byte in bytes {
            current ^= UInt64(byte)
            current &*= 0x0000_0100_0000_01b3
        }
        value = current
    }

    /// Adds an integer (its eight bytes, little-endian).
    /// - Parameter number: the integer.
    public mutating func combine(_ number: Int) {
        var remaining = UInt64(bitPattern: Int64(number))
        var current = value
        for _ in 0..<8 {
            current ^= remaining & 0xff
            current &*= 0x0000_0100_0000_01b3
            remaining >>= 8
        }
        value = current
    }
}

extension SessionEvent {
    /// The page the event is about (a navigation's is the page it shows).
    var pageUnit: String {
        switch kind {
        case .patch(let patch): return patch.unit
        case .snapshot(let snapshot): return snapshot.unit
        case .navigation(let navigation): return navigation.unit
        }
    }

    /// Adds the event's number, kind, page, revision and content to `digest`.
    /// - Parameter digest: the page's digest so far.
    func combine(into digest: inout StableDigest) {
        /// The JSON text that `encode` writes (as `jsonBytes` gives it; at most `capacity` bytes), added to the
        /// digest from room of its own, on the stack when it is small.
        func combineJSON(capacity: Int, _ encode: (inout BoundedBytes) -> Void) {
            BoundedBytes.withTemporary(capacity: capacity, encode) { digest.combine($0) }
        }
        digest.combine(sequence)
        switch kind {
        case .patch(let patch):
            digest.combine(1)
            digest.combine(patch.rev)
            combineJSON(capacity: patch.patch.encodedCapacity) { $0.putPatch(patch.patch) }
        case .snapshot(let snapshot):
            digest.combine(2)
            digest.combine(snapshot.rev)
            combineJSON(capacity: snapshot.view.encodedCapacity) { $0.putValue(snapshot.view) }
        case .navigation(let navigation):
            digest.combine(3)
            digest.combine(navigation.kind.rawValue.utf8)
            digest.combine(navigation.state.stack.joined(separator: "\u{1}").utf8)
            digest.combine(navigation.page.rev)
            combineJSON(capacity: navigation.page.view.encodedCapacity) { $0.putValue(navigation.page.view) }
            if let callback = navigation.callbackPatch {
                digest.combine(callback.rev)
                combineJSON(capacity: callback.patch.encodedCapacity) { $0.putPatch(callback.patch) }
            }
        }
    }
}

extension [SessionEvent] {
    /// Per page, its revision after these events.
    var pageRevisions: [String: Int] {
        // A single patch (most inputs): its page's revision, hashed once, in a dictionary made to its size.
        if count == 1, case .patch(let patch) = self[startIndex].kind { return [patch.unit: patch.rev] }
        var revisions: [String: Int] = [:]
        for event in self {
            switch event.kind {
            case .patch(let patch): revisions[patch.unit] = patch.rev
            case .snapshot(let snapshot): revisions[snapshot.unit] = snapshot.rev
            case .navigation(let navigation):
                revisions[navigation.page.unit] = navigation.page.rev
                if let callback = navigation.callbackPatch { revisions[callback.unit] = callback.rev }
            }
        }
        return revisions
    }

    /// Per page, the digest of these events about it, in order.
    var pageDigests: [String: UInt64] {
        guard !isEmpty else { return [:] }
        // Read in place (`self[index]`): a copy of each event would retain its patch only to release it.
        let unit = self[startIndex].pageUnit
        // Most inputs change one page: one digest, no dictionary of them.
        if indices.allSatisfy({ self[$0].pageUnit == unit }) {
            var digest = StableDigest()
            for index in indices { self[index].combine(into: &digest) }
            return [unit: digest.value]
        }
        var digests: [String: StableDigest] = [:]
        for event in self {
            event.combine(into: &digests[event.pageUnit, default: StableDigest()])
        }
        return digests.mapValues(\.value)
    }
}
