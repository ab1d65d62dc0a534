#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
import CNATS
import Locking

/// A ``SessionStore`` in NATS JetStream (`SESSION_STORE=nats://host:port[,host:port…]`), shared by every node
/// that names the same NATS: a session's log outlives the node, and any node can restore it.
///
/// **Layout.** One stream, `MVVMR_SESSIONS` (file storage, `NATS_REPLICAS` replicas), holds every session's log on
/// a subject of its own, `mvvmr.session.<id>.log`: input records, snapshots and removals in order (see
/// ``NATSLogFormat`` for the headers). A key-value bucket, `MVVMR_ACTIVITY`, holds each session's last activity
/// (seconds since 1970, as text) under its id, with a time to live: a key no node wrote for that long goes.
///
/// **The fence.** Every write to a session's subject names the subject's last stream sequence as this node knows it
/// (JetStream's `Nats-Expected-Last-Subject-Sequence`; record 1 expects no message at all). JetStream refuses it when
/// another node wrote meanwhile, and the write completes `outOfOrder` with nothing written: of two nodes appending
/// the same session, exactly one wins each record number (on nats-server before 2.9.21 two writes a few
/// milliseconds apart may both be stored; readers then take the first, see ``NATSLogFormat``). The loser forgets where the session stands and reads it
/// again from the stream (its server restores the session there on the next request). The numbers are checked too,
/// as every store does (``SessionFence``), against the last message's `Mvvmr-Last`.
///
/// **Pipelining.** Appends are published asynchronously (`js_PublishMsgAsync`): many sessions' records are in flight
/// at once (up to ``Settings/maxInFlight``), each session's one at a time (the next one names the sequence JetStream
/// gave the one before). Each completes once JetStream acknowledged it, with completions in the order queued.
/// `saveSnapshot`, `removeRecords`, `touch` and `delete` wait for the session's queued appends, hold its turn while
/// they run (synchronous JetStream calls on the caller's thread), and return once done.
///
/// **Compaction and removal.** A snapshot is a message of the session's subject, fenced like a record; once stored,
/// the subject's messages before it are purged. `removeRecords` writes a `remove` message naming the numbers, which
/// reading applies (so the fence's numbering is kept; deleting single stream messages is left to the next
/// snapshot's purge). `delete` purges the session's subject and its bucket key.
///
/// **Reading.** `load` asks the stream's leader for the subject's last message (where the fence stands; a direct get
/// could be answered by a lagging replica), then reads the subject's messages up to it with an ordered consumer; a
/// read that another node's snapshot purged under (not the whole log up to that message, or a gap in its records)
/// is read again. `sessions(lastActiveBefore:limit:)` reads the whole activity bucket;
/// `sessionCount()` is the bucket's message count.
///
/// **Outages.** The connection reconnects by itself, forever, every half second. While it is down, appends complete
/// `unavailable` at once and every other call throws it; a publish whose acknowledgement does not come within
/// ``Settings/waitMilliseconds`` fails `unavailable` (it may still have been stored: the session is then read again
/// from the stream). ``isAvailable`` says whether the connection is up. A store opened while no server can be
/// reached opens anyway, unavailable, and makes the stream and the bucket once connected.
public final class NATSSessionStore: SessionStore, NATSAckReceiver {
    /// How to reach NATS and how to lay the store out there.
    public struct Settings: Sendable, Equatable {
        /// The NATS servers, as `nats://host:port` URLs.
        public var servers: [String]
        /// How many JetStream servers keep each message of the stream and of the bucket (1, 3 or 5 in a cluster).
        public var replicas = 1
        /// How long a session's key in the activity bucket lives after its last write, in seconds.
        public var activityTimeToLiveSeconds: Int64 = 7_200
        /// The first part of the stream's and the bucket's names (`MVVMR`: `MVVMR_SESSIONS`, `MVVMR_ACTIVITY`,
        /// subjects `mvvmr.session.<id>.log`); letters, digits and `_` only.
        public var name = "MVVMR"
        /// How long a publish waits for JetStream's acknowledgement, and a request for its answer, in milliseconds.
        public var waitMilliseconds: Int64 = 3_000
        /// How many appends may wait for their acknowledgement at once; more wait in the store's queue.
        public var maxInFlight = 1_024

        /// Settings for `servers`, every other one at its default.
        /// - Parameter servers: `nats://host:port` URLs.
        public init(servers: [String]) {
            self.servers = servers
        }
    }

    /// The `nats://host:port` URLs of a `SESSION_STORE` value `nats://host:port[,host:port…]`, or nil when it is
    /// not one (each further server may repeat the `nats://`).
    /// - Parameter value: the setting's value.
    public static func servers(in value: String) -> [String]? {
        guard value.hasPrefix("nats://") else { return nil }
        var servers: [String] = []
        for part in value.dropFirst("nats://".count).split(separator: ",", omittingEmptySubsequences: false) {
            var address = part.trimmingPrefix(while: { $0 == " " })
            if address.hasPrefix("nats://") { address = address.dropFirst("nats://".count) }
            guard let colon = address.lastIndex(of: ":"), colon != address.startIndex,
                let port = Int(address[address.index(after: colon)...]), (1...65_535).contains(port),
                !address.contains("/"), !address.contains(" ")
            else { return nil }
            servers.append("nats://" + address)
        }
        return servers.isEmpty ? nil : servers
    }

    // MARK: - State

    /// An append in the store's queue, with what its publishes have told so far. Only touched under `state`'s lock.
    private final class PendingAppend: @unchecked Sendable {
        // @unchecked Sendable: every field but the constants is written only with `state` locked, and read so, except
        // `fence` and `writesActivity`, which `publish` reads unlocked after the lock hold that handed it the append
        // (`advance` set them, under the lock, before that; nothing writes them after).
        let record: StoredRecord
        let lastActive: Int64
        let completion: @Sendable (Result<Void, SessionStoreError>) -> Void
        /// The fence the record was published against.
        var fence = NATSFence.absent
        /// Whether its publishes include the session's activity.
        var writesActivity = false
        /// Acknowledgements still to come.
        var awaiting = 0
        var storedSequence: UInt64?
        var recordFailure: SessionStoreError?
        var activityFailed = false
        /// Set once it is done; its completion then runs in queue order.
        var outcome: Result<Void, SessionStoreError>?

        init(record: StoredRecord, lastActive: Int64, completion: @escaping @Sendable (Result<Void, SessionStoreError>) -> Void) {
            self.record = record
            self.lastActive = lastActive
            self.completion = completion
        }
    }

    /// A caller waiting for its turn on a session (``exclusively(_:_:)``). Only touched under `state`'s lock.
    private final class Turn: @unchecked Sendable {
        // @unchecked Sendable: `granted` is read and written only with `state` locked.
        var granted = false
    }

    private enum Step {
        case append(PendingAppend)
        case turn(Turn)
    }

    /// One session as this node tracks it: where its fence stands (nil: not known, read it first) and what waits for
    /// its turn. A session has one step under way at a time (`busy`).
    private struct Chain {
        var fence: NATSFence?
        var busy = false
        var waiting: [Step] = []
    }

    /// Which append a message in flight belongs to, and which of its publishes it is.
    private struct InFlightMessage {
        let append: PendingAppend
        let isRecord: Bool
    }

    /// Work found under the lock, done outside it.
    private enum Work {
        case publish(PendingAppend)
        case readFence(String)
    }

    private struct State {
        var chains: [String: Chain] = [:]
        /// Every append not yet completed, in queue order (from `head`).
        var queue: [PendingAppend] = []
        var head = 0
        var enqueued = 0
        var delivered = 0
        /// Appends published and not yet acknowledged; `ready` waits for room.
        var inFlight = 0
        var maxInFlight = 1_024
        var ready: [PendingAppend] = []
        var readyHead = 0
        var messages: [UInt: InFlightMessage] = [:]
        /// The thread running completions now.
        var delivering: pthread_t?
        /// Calls using the client now (it is closed once none is).
        var activeCalls = 0
        var isClosing = false
        var isClosed = false
        /// Sessions an append of which failed: the lowest such record's number, and when. Their appends of later
        /// numbers fail too until their log is read again with nothing of theirs queued (``load(_:)``), or this
        /// node claims or deletes them. See ``failedAppendMemory``.
        var failedSessions: [String: FailedAppend] = [:]
    }

    /// A session's failed append: its record's number, and when it failed.
    private struct FailedAppend {
        let number: Int
        let time: ContinuousClock.Instant
    }

    /// How long a session whose append failed refuses its later appends unless its log is read again. Its copy learns
    /// of the failure only from the completion, a moment later, and stops appending then; an append queued in that
    /// moment must not read the fence again: after another node's records its number could fit, and this copy's
    /// record (made from a state the log does not hold) would go into the log after them.
    static let failedAppendMemory: Duration = .seconds(30)

    /// How many sessions' fences a node keeps at most; past it, idle ones are forgotten (and read again when used).
    static let maxTrackedSessions = 100_000

    private let state = Monitor(State())
    private let client: NATSClient
    private let router: NATSAckRouter
    private let settings: Settings
    private let logSubjectPrefix: String
    private let activitySubjectPrefix: String
    /// Where ownership notices go: `<name>.owner.<session key>`, each carrying the announcing node's id.
    private let ownerSubjectPrefix: String
    /// This store's node id in ownership notices (random, so that a node ignores its own).
    private let nodeIdentifier: [UInt8]
    private let ownershipRouter = NATSMessageRouter()

    /// What this store was opened with.
    public var configuration: Settings { settings }

    /// JetStream acknowledges a record once its stream's replicas keep it, which is at least what `.process` promises.
    public var durability: SessionDurability { .process }

    /// It keeps every record in JetStream.
    public var keepsSessions: Bool { true }

    /// Several nodes share it.
    public var isShared: Bool { true }

    /// Whether the connection to NATS is up (false while it reconnects, and once closed).
    public var isAvailable: Bool {
        guard enter() else { return false }
        defer { leave() }
        return client.isReady
    }

    /// Connects to NATS and makes the stream and the bucket when missing. When no server can be reached yet, the store
    /// opens anyway: it keeps trying, answers `unavailable` meanwhile (``isAvailable`` is false), and makes the stream
    /// and the bucket once connected.
    /// - Parameter settings: the servers and the layout.
    /// - Throws: `unavailable` when the settings are unusable, or a server reached refuses the stream or the bucket
    ///   (JetStream not enabled, say).
    public init(_ settings: Settings) throws(SessionStoreError) {
        guard !settings.servers.isEmpty else { throw SessionStoreError(.unavailable, "no NATS server given") }
        guard !settings.name.isEmpty, settings.name.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) })
        else { throw SessionStoreError(.unavailable, "'\(settings.name)' is not a stream name of letters, digits and _") }
        self.settings = settings
        let subjectPrefix = settings.name.lowercased()
        logSubjectPrefix = subjectPrefix + ".session."
        ownerSubjectPrefix = subjectPrefix + ".owner."
        var generator = SystemRandomNumberGenerator()
        nodeIdentifier = Array(String(generator.next(), radix: 16).utf8)
        let bucketName = settings.name + "_ACTIVITY"
        activitySubjectPrefix = "$KV." + bucketName + "."
        let router = NATSAckRouter()
        self.router = router
        client = try NATSClient(
            servers: settings.servers, streamName: settings.name + "_SESSIONS", subjects: logSubjectPrefix + "*.log",
            bucketName: bucketName, replicas: max(1, settings.replicas),
            bucketTimeToLiveSeconds: max(1, settings.activityTimeToLiveSeconds),
            waitMilliseconds: max(100, settings.waitMilliseconds), router: router)
        state.withLock { $0.maxInFlight = max(1, settings.maxInFlight) }
        router.route(to: self)
    }

    deinit {
        close()
    }

    private func logSubject(_ session: String) -> String { logSubjectPrefix + NATSLogFormat.key(of: session) + ".log" }

    // MARK: - Ownership

    /// Claims `session` as `stored` shows it (see ``SessionStore/claim(_:asLoaded:)``): writes a claim to its subject,
    /// fenced on the last message `stored` was read up to, then announces it (``announceOwnership(of:claim:)``). A
    /// claim is a `remove` message naming no record, with the claiming node's id in `Mvvmr-Owner` (NATSLogFormat), so
    /// that a node of an earlier version reads it as nothing. Its order is its sequence number in the stream.
    /// - Returns: nil when the subject has another last message (another node wrote or claimed since the load), or
    ///   when another write came between the load and the claim all the same (see ``NATSLogFormat``).
    public func claim(_ session: String, asLoaded stored: StoredSession) throws(SessionStoreError) -> SessionClaim? {
        guard let position = stored.position else {
            // Not read from this kind of store: nothing to fence on; the notice at least drops other copies.
            announceOwnership(of: session, claim: .unordered)
            return .unordered
        }
        let owner = String(decoding: nodeIdentifier, as: UTF8.self)
        let claim = try exclusively(session) { (fence: inout NATSFence) throws(SessionStoreError) -> SessionClaim? in
            var claimed = NATSFence(lastNumber: position.lastNumber, floor: position.floor, sequence: position.sequence)
            if fence.sequence == position.sequence {
                claimed.activity = fence.activity
                claimed.recentRecords = fence.recentRecords
            }
            let sequence: UInt64
            do throws(SessionStoreError) {
                let subject = logSubject(session)
                sequence = try write(
                    subject,
                    headers: NATSLogFormat.headers(kind: "remove", number: 0, last: position.lastNumber, floor: position.floor)
                        + [(NATSLogFormat.owner, owner), (NATSLogFormat.previous, String(position.sequence))],
                    body: [], fence: &claimed)
                // nats-server before 2.9.21 may store a write that names the same last message as this one, at the same
                // moment (see `NATSLogFormat`). One that came before the claim makes it void: load again.
                if try !message(at: sequence, directlyFollows: position.sequence, on: subject) {
                    throw SessionStoreError.outOfOrder("another write of session \(session) came between its load and its claim")
                }
            } catch {
                // Refused: another node wrote since the load. Not answered: it may have been written. Either way this
                // node reads the fence again before its next write.
                fence.isStale = true
                if error.kind == .outOfOrder { return nil }
                throw error
            }
            fence = claimed
            // This node holds the session from what it read: its next records follow that (and any append of an
            // earlier copy still queued ran before this turn).
            state.withLock { $0.failedSessions[session] = nil }
            return SessionClaim(order: sequence)
        }
        if let claim { announceOwnership(of: session, claim: claim) }
        return claim
    }

    /// Publishes, on core NATS, that this node now holds `session` live (`<name>.owner.<session key>`, the node's id
    /// and the claim's order as the payload, `<node> <order>`): the other nodes drop their copies restored from
    /// earlier claims. At most once and not waited for; a node that misses it serves stale reads until its next
    /// write, which the fence refuses.
    public func announceOwnership(of session: String, claim: SessionClaim) {
        guard enter() else { return }
        defer { leave() }
        client.publishNotice(
            ownerSubjectPrefix + NATSLogFormat.key(of: session), nodeIdentifier + [UInt8(ascii: " ")] + Array(String(claim.order).utf8))
    }

    /// Subscribes to the other nodes' ownership notices: `handler` gets each session id another node announced, with
    /// its claim (on a nats.c thread). Once per store; nats.c subscribes again by itself after a reconnect.
    public func observeOwnership(_ handler: @escaping @Sendable (String, SessionClaim) -> Void) {
        guard enter() else { return }
        defer { leave() }
        let prefix = ownerSubjectPrefix
        let me = nodeIdentifier
        ownershipRouter.route { subject, payload in
            let notice = Self.ownershipNotice(payload)
            guard notice.node != me[...], subject.hasPrefix(prefix),
                let session = NATSLogFormat.session(ofKey: subject.dropFirst(prefix.count))
            else { return }
            handler(session, notice.claim)
        }
        do throws(SessionStoreError) {
            try client.subscribe(prefix + "*", router: ownershipRouter)
        } catch {
            // Without notices a stale copy only serves reads until its next write (fenced): degraded, not unsafe.
            ownershipRouter.route(to: nil)
        }
    }

    /// An ownership notice's node id and claim: `<node> <order>`, the order's leading digits read (so that a later
    /// version may add fields after them). A node of an earlier version sends `<node>` alone, and an order that does
    /// not read as a number is not trusted either: an ``SessionClaim/unordered`` claim, which drops any copy.
    static func ownershipNotice(_ payload: [UInt8]) -> (node: ArraySlice<UInt8>, claim: SessionClaim) {
        guard let space = payload.firstIndex(of: UInt8(ascii: " ")) else { return (payload[...], .unordered) }
        let digits = payload[(space + 1)...].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        let order = digits.isEmpty ? nil : UInt64(String(decoding: digits, as: UTF8.self))
        return (payload[..<space], order.map(SessionClaim.init(order:)) ?? .unordered)
    }

    private func activitySubject(_ session: String) -> String { activitySubjectPrefix + NATSLogFormat.key(of: session) }

    // MARK: - Appending

    /// Queues `record`; `completion` runs once JetStream acknowledged it (on nats.c's thread, usually), or with why
    /// it was not stored: `outOfOrder` for a number that does not follow the session's last or a write refused by
    /// the fence, `unavailable` when NATS cannot be reached or did not answer in time. After `close()` it runs at
    /// once, on the caller's thread, with `unavailable("closed")`.
    /// - Parameters:
    ///   - record: the record; its number must be the session's last plus one (record 1 creates the session).
    ///   - lastActive: the time of the input, in seconds since 1970, written to the activity bucket.
    ///   - completion: runs once, in queue order; quick, and never waiting for the store.
    public func append(
        _ record: StoredRecord, lastActive: Int64,
        completion: @escaping @Sendable (Result<Void, SessionStoreError>) -> Void
    ) {
        let pending = PendingAppend(record: record, lastActive: lastActive, completion: completion)
        let work: [Work]? = state.withLock { state in
            guard !state.isClosing else { return nil }
            state.queue.append(pending)
            state.enqueued += 1
            state.chains[record.session, default: Chain()].waiting.append(.append(pending))
            var work: [Work] = []
            Self.advance(record.session, in: &state, work: &work)
            return work
        }
        guard let work else {
            completion(.failure(.closed))
            return
        }
        perform(work)
    }

    /// Takes the session's next steps while it has no step under way: appends that fail the number fence complete at
    /// once, the first one that passes is published (or waits for room), a turn is granted.
    private static func advance(_ session: String, in state: inout State, work: inout [Work]) {
        guard var chain = state.chains[session], !chain.busy else { return }
        defer {
            // An idle session whose fence says nothing worth keeping (not known, or no such session) is forgotten, and so
            // is any idle one past the bound: its fence is read from the stream again when it is next written.
            if !chain.busy && chain.waiting.isEmpty
                && (!(chain.fence?.exists ?? false) || state.chains.count > NATSSessionStore.maxTrackedSessions)
            {
                state.chains[session] = nil
            } else {
                state.chains[session] = chain
            }
        }
        while let step = chain.waiting.first {
            switch step {
            case .turn(let turn):
                chain.waiting.removeFirst()
                chain.busy = true
                turn.granted = true
                return
            case .append(let pending):
                if let failed = state.failedSessions[session] {
                    if ContinuousClock.now - failed.time >= failedAppendMemory {
                        state.failedSessions[session] = nil
                    } else if pending.record.number > failed.number {
                        chain.waiting.removeFirst()
                        pending.outcome = .failure(
                            .outOfOrder(
                                "record \(pending.record.number) of session \(session) follows a failed append; "
                                    + "the session's log must be read again first"))
                        continue
                    }
                }
                guard let fence = chain.fence else {
                    if pending.record.number == 1 {
                        // Record 1 expects no message on the subject: no need to read where the fence stands.
                        chain.fence = .absent
                        continue
                    }
                    chain.busy = true
                    work.append(.readFence(session))
                    return
                }
                chain.waiting.removeFirst()
                if let refusal = SessionFence.refusal(toAppend: pending.record, after: fence.lastNumber) {
                    // Refused against a fence this node knows, before anything was written: the fence stays as it
                    // is, and so may the session's next record (unlike after a failed write, see `failedSessions`).
                    pending.outcome = .failure(refusal)
                    continue
                }
                chain.busy = true
                pending.fence = fence
                pending.writesActivity = fence.activity != pending.lastActive
                if state.inFlight < state.maxInFlight {
                    state.inFlight += 1
                    work.append(.publish(pending))
                } else {
                    state.ready.append(pending)
                }
                return
            }
        }
    }

    /// Does what `advance` found, and whatever that leads to, then runs the completions that are due.
    private func perform(_ initial: [Work]) {
        var work = initial
        while !work.isEmpty {
            let next = work.removeFirst()
            switch next {
            case .publish(let pending): work += publish(pending)
            case .readFence(let session): work += readFence(session)
            }
        }
        deliverCompletions()
        state.broadcast()
    }

    /// Publishes an append's record (and the session's activity when it changed) without waiting.
    private func publish(_ pending: PendingAppend) -> [Work] {
        let record = pending.record
        let fence = pending.fence
        var messages: [(message: OpaquePointer, isRecord: Bool)] = []
        do throws(SessionStoreError) {
            messages.append(
                (
                    try NATSClient.message(
                        subject: logSubject(record.session),
                        headers: NATSLogFormat.headers(kind: "record", number: record.number, last: record.number, floor: fence.floor),
                        body: record.body), true
                ))
            if pending.writesActivity {
                messages.append(
                    (try NATSClient.message(subject: activitySubject(record.session), headers: [], body: Array(String(pending.lastActive).utf8)), false))
            }
        } catch {
            for made in messages { natsMsg_Destroy(made.message) }
            return settleLocked(pending, failure: error)
        }
        // While the link is down, fail at once: nats.c would otherwise buffer the message and send it on reconnecting,
        // long after its append was told it failed.
        guard client.isConnected else {
            for made in messages { natsMsg_Destroy(made.message) }
            return settleLocked(pending, failure: SessionStoreError(.unavailable, "NATS is not connected"))
        }
        state.withLock { state in
            pending.awaiting = messages.count
            for made in messages {
                state.messages[UInt(bitPattern: made.message)] = InFlightMessage(append: pending, isRecord: made.isRecord)
            }
        }
        var work: [Work] = []
        var failure: SessionStoreError?
        for made in messages {
            let key = UInt(bitPattern: made.message)
            // After a record that could not be published, its activity is not sent either. An unsent message's address
            // is forgotten before the message is destroyed: a message made meanwhile could get that address.
            if let failure {
                work += noteUnsent(key, isRecord: made.isRecord, of: pending, failure)
                natsMsg_Destroy(made.message)
                continue
            }
            do throws(SessionStoreError) {
                try client.publishAsync(made.message, expecting: made.isRecord ? NATSExpectation(lastSubjectSequence: fence.sequence) : nil)
            } catch {
                if made.isRecord { failure = error }
                work += noteUnsent(key, isRecord: made.isRecord, of: pending, error)
                natsMsg_Destroy(made.message)
            }
        }
        return work
    }

    /// A message of `pending` that was not sent (no acknowledgement will come for it) ends with `failure`.
    private func noteUnsent(_ key: UInt, isRecord: Bool, of pending: PendingAppend, _ failure: SessionStoreError) -> [Work] {
        state.withLock { state -> [Work] in
            guard state.messages.removeValue(forKey: key) != nil else { return [] }
            var work: [Work] = []
            Self.note(.failed(failure), isRecord: isRecord, of: pending, in: &state, work: &work)
            return work
        }
    }

    /// Fails an append that could not be published (no acknowledgement will come).
    private func settleLocked(_ pending: PendingAppend, failure: SessionStoreError) -> [Work] {
        state.withLock { state in
            pending.awaiting = 0
            pending.recordFailure = failure
            var work: [Work] = []
            Self.settle(pending, in: &state, work: &work)
            return work
        }
    }

    /// JetStream's acknowledgement of a message published by ``publish(_:)``, on nats.c's thread.
    func acknowledged(message: UInt, _ ack: NATSAck) {
        let work: [Work] = state.withLock { state in
            guard let inFlight = state.messages.removeValue(forKey: message) else { return [] }
            var work: [Work] = []
            Self.note(ack, isRecord: inFlight.isRecord, of: inFlight.append, in: &state, work: &work)
            return work
        }
        perform(work)
    }

    private static func note(_ ack: NATSAck, isRecord: Bool, of pending: PendingAppend, in state: inout State, work: inout [Work]) {
        switch (ack, isRecord) {
        case (.stored(let sequence), true): pending.storedSequence = sequence
        case (.failed(let error), true): pending.recordFailure = error
        case (.stored, false): break
        case (.failed, false): pending.activityFailed = true
        }
        pending.awaiting -= 1
        if pending.awaiting == 0 { settle(pending, in: &state, work: &work) }
    }

    /// Every publish of an append has ended: it is done, and its session takes its next step.
    private static func settle(_ pending: PendingAppend, in state: inout State, work: inout [Work]) {
        let session = pending.record.session
        var chain = state.chains[session] ?? Chain()
        if let failure = pending.recordFailure ?? (pending.storedSequence == nil ? SessionStoreError(.unavailable, "no sequence") : nil) {
            pending.outcome = .failure(failure)
            // Whether it was stored is not known (a timeout), or another node wrote (the fence): read it again before
            // the next write. The session's later appends cannot follow a record that failed, nor may one queued
            // before its copy learns of the failure (`failedSessions`).
            chain.fence = nil
            noteFailedAppend(pending.record.number, of: session, in: &state)
            let kind = failure.kind
            chain.waiting.removeAll { step in
                guard case .append(let later) = step else { return false }
                later.outcome = .failure(
                    kind == .outOfOrder
                        ? .outOfOrder("record \(later.record.number) of session \(session) follows record \(pending.record.number), which failed")
                        : failure)
                return true
            }
        } else if let sequence = pending.storedSequence {
            pending.outcome = .success(())
            let activity = pending.writesActivity ? (pending.activityFailed ? nil : pending.lastActive) : pending.fence.activity
            var fence = pending.fence
            fence.lastNumber = pending.record.number
            fence.sequence = sequence
            fence.activity = activity
            fence.noteRecord(pending.record.number, at: sequence)
            chain.fence = fence
        }
        chain.busy = false
        state.chains[session] = chain
        state.inFlight -= 1
        if state.readyHead < state.ready.count {
            let next = state.ready[state.readyHead]
            state.readyHead += 1
            if state.readyHead == state.ready.count {
                state.ready = []
                state.readyHead = 0
            }
            state.inFlight += 1
            work.append(.publish(next))
        }
        advance(session, in: &state, work: &work)
    }

    /// Remembers that the append of record `number` of `session` failed (see ``State/failedSessions``); past
    /// ``maxTrackedSessions`` sessions, those remembered longer than ``failedAppendMemory`` are forgotten first, and
    /// all of them when that is not enough (an outage that fails more sessions than that at once), so that the map
    /// stays bounded and is filtered once per that many failures at most.
    private static func noteFailedAppend(_ number: Int, of session: String, in state: inout State) {
        let now = ContinuousClock.now
        if state.failedSessions.count >= maxTrackedSessions {
            state.failedSessions = state.failedSessions.filter { now - $0.value.time < failedAppendMemory }
            if state.failedSessions.count >= maxTrackedSessions / 2 { state.failedSessions = [:] }
        }
        let lowest = min(number, state.failedSessions[session]?.number ?? number)
        state.failedSessions[session] = FailedAppend(number: lowest, time: now)
    }

    /// Reads where a session's fence stands (its subject's last message), for its next step.
    private func readFence(_ session: String) -> [Work] {
        let result: Result<NATSFence, SessionStoreError>
        do throws(SessionStoreError) {
            result = .success(try fenceFromStream(session))
        } catch {
            result = .failure(error)
        }
        return state.withLock { state in
            var chain = state.chains[session] ?? Chain()
            chain.busy = false
            switch result {
            case .success(let fence): chain.fence = fence
            case .failure(let error):
                var lowest: Int?
                chain.waiting.removeAll { step in
                    guard case .append(let pending) = step else { return false }
                    pending.outcome = .failure(error)
                    lowest = min(lowest ?? pending.record.number, pending.record.number)
                    return true
                }
                if let lowest { Self.noteFailedAppend(lowest, of: session, in: &state) }
            }
            state.chains[session] = chain
            var work: [Work] = []
            Self.advance(session, in: &state, work: &work)
            return work
        }
    }

    /// Whether the message at `sequence` is the first on `subject` after `previous`: a claim that is not came after
    /// another write that got through the fence with it (see ``NATSLogFormat``). One message get, asked of the leader.
    private func message(at sequence: UInt64, directlyFollows previous: UInt64, on subject: String) throws(SessionStoreError)
        -> Bool
    {
        try client.nextMessage(in: client.streamName, on: subject, from: previous + 1)?.sequence == sequence
    }

    private func fenceFromStream(_ session: String) throws(SessionStoreError) -> NATSFence {
        guard client.isConnected else { throw SessionStoreError(.unavailable, "NATS is not connected") }
        let subject = logSubject(session)
        guard let last = try client.lastMessage(on: subject) else { return .absent }
        if NATSLogFormat.isClaim(last), let named = last.headers[NATSLogFormat.previous].flatMap({ UInt64($0) }),
            try !message(at: last.sequence, directlyFollows: named, on: subject)
        {
            // A void claim (another write came between it and what it names, see `NATSLogFormat`): its headers are not
            // the chain's. The whole log says where the chain stands (rare: the claiming node loads and claims again).
            let messages = try logMessages(on: subject, through: last)
            guard messages.last?.sequence == last.sequence,
                let (_, fence) = try NATSLogFormat.session(session, from: messages, through: try NATSLogFormat.fence(after: last))
            else {
                throw SessionStoreError(.unavailable, "the log of session \(session) changed while its fence was read")
            }
            return fence
        }
        return try NATSLogFormat.fence(after: last)
    }

    /// A completion to run, with its outcome.
    private struct DueCompletion {
        let completion: @Sendable (Result<Void, SessionStoreError>) -> Void
        let outcome: Result<Void, SessionStoreError>
    }

    /// Runs the completions now due, in queue order, on this thread: one thread at a time runs them.
    private func deliverCompletions() {
        while true {
            let due: [DueCompletion] = state.withLock { state in
                guard state.delivering == nil else { return [] }
                var due: [DueCompletion] = []
                while state.head < state.queue.count, let outcome = state.queue[state.head].outcome {
                    due.append(DueCompletion(completion: state.queue[state.head].completion, outcome: outcome))
                    state.head += 1
                }
                if state.head > 1_024 && state.head * 2 > state.queue.count {
                    state.queue.removeFirst(state.head)
                    state.head = 0
                }
                if !due.isEmpty { state.delivering = pthread_self() }
                return due
            }
            if due.isEmpty { return }
            for entry in due { entry.completion(entry.outcome) }
            state.withLock { state in
                state.delivering = nil
                state.delivered += due.count
            }
            state.broadcast()
        }
    }

    private var isDeliveringThread: Bool {
        state.withLock { state in state.delivering.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    // MARK: - A session's turn

    /// Waits for `session`'s appends queued before the call, then runs `body` with its fence (read from the stream
    /// first when not known), while no other step of the session runs; `body` may change the fence (nil: not known).
    private func exclusively<Value>(
        _ session: String, _ body: (inout NATSFence) throws(SessionStoreError) -> Value
    ) throws(SessionStoreError) -> Value {
        guard !isDeliveringThread else {
            throw SessionStoreError(.unavailable, "called from a completion, on the thread that runs them")
        }
        let turn = Turn()
        let work: [Work]? = state.withLock { state in
            guard !state.isClosing else { return nil }
            state.activeCalls += 1
            state.chains[session, default: Chain()].waiting.append(.turn(turn))
            var work: [Work] = []
            Self.advance(session, in: &state, work: &work)
            return work
        }
        guard let work else { throw .closed }
        perform(work)
        let known: NATSFence? = state.withLock(when: { _ in turn.granted }) { state in state.chains[session]?.fence }
        // What the session's fence is after the call: nil when not known (a write whose outcome is unknown, or refused
        // because another node wrote: read it again before the next write).
        var fence: NATSFence?
        let outcome: Result<Value, SessionStoreError>
        do throws(SessionStoreError) {
            var current: NATSFence
            if let known { current = known } else { current = try fenceFromStream(session) }
            do throws(SessionStoreError) {
                outcome = .success(try body(&current))
            } catch {
                outcome = .failure(error)
            }
            fence = current.isStale ? nil : current
        } catch {
            outcome = .failure(error)
        }
        let after: [Work] = state.withLock { [fence] state in
            state.activeCalls -= 1
            var chain = state.chains[session] ?? Chain()
            chain.busy = false
            chain.fence = fence
            state.chains[session] = chain
            var work: [Work] = []
            Self.advance(session, in: &state, work: &work)
            return work
        }
        perform(after)
        return try outcome.get()
    }

    /// Runs `body` with the client, unless the store is closed (or closing).
    private func withClient<Value>(_ body: () throws(SessionStoreError) -> Value) throws(SessionStoreError) -> Value {
        guard enter() else { throw .closed }
        defer { leave() }
        guard client.isConnected else { throw SessionStoreError(.unavailable, "NATS is not connected") }
        return try body()
    }

    private func enter() -> Bool {
        state.withLock { state in
            guard !state.isClosed && !state.isClosing else { return false }
            state.activeCalls += 1
            return true
        }
    }

    private func leave() {
        state.withLock { $0.activeCalls -= 1 }
        state.broadcast()
    }

    // MARK: - Reading

    /// What the stream holds of `session`: its subject's messages, read in order up to the last one when the call
    /// began; nil when it has none.
    /// - Parameter session: the session's id.
    public func load(_ session: String) throws(SessionStoreError) -> StoredSession? {
        try withClient { () throws(SessionStoreError) -> StoredSession? in
            let subject = logSubject(session)
            // Another node's snapshot (or deletion) may purge what is being read: then read again, from its last message.
            for _ in 0..<Self.loadAttempts {
                guard let last = try client.lastMessage(on: subject) else {
                    noteFence(.absent, of: session)
                    return nil
                }
                let messages = try logMessages(on: subject, through: last)
                guard messages.last?.sequence == last.sequence,
                    let stored = try self.session(session, from: messages, last: last)
                else { continue }
                return stored
            }
            throw SessionStoreError(.unavailable, "the log of session \(session) kept changing while it was read")
        }
    }

    /// How many times `load` reads a log that changes while it is read.
    static let loadAttempts = 5

    /// The most messages a log may hold (as its last message tells: records since its snapshot) to be read with
    /// message gets alone; a longer one is read with an ordered consumer first, ten times faster, and with message
    /// gets when the consumer does not deliver within ``consumerWaitMilliseconds`` (after a leader change).
    static let messageGetLimit = 32
    static let consumerWaitMilliseconds: Int64 = 1_000

    /// A session log's messages up to `last`, its last one.
    private func logMessages(on subject: String, through last: NATSStreamMessage) throws(SessionStoreError) -> [NATSStreamMessage] {
        let fence = try NATSLogFormat.fence(after: last)
        let (records, overflowed) = fence.lastNumber.subtractingReportingOverflow(fence.floor)
        if !overflowed && records < Self.messageGetLimit {
            return try client.logMessages(on: subject, through: last.sequence)
        }
        do throws(SessionStoreError) {
            return try client.messages(
                in: client.streamName, on: subject, through: last.sequence, wait: Self.consumerWaitMilliseconds)
        } catch {
            return try client.logMessages(on: subject, through: last.sequence)
        }
    }

    /// The session `messages` (its subject's, up to `last`) make, and this node's fence taken from them; nil when they
    /// are not the whole log (read again).
    private func session(_ session: String, from messages: [NATSStreamMessage], last: NATSStreamMessage) throws(SessionStoreError)
        -> StoredSession?
    {
        guard let (stored, fence) = try NATSLogFormat.session(session, from: messages, through: try NATSLogFormat.fence(after: last))
        else { return nil }
        noteFence(fence, of: session)
        return StoredSession(
            snapshot: stored.snapshot, records: stored.records,
            position: StoredLogPosition(sequence: last.sequence, lastNumber: fence.lastNumber, floor: fence.floor))
    }

    /// Takes a fence read from the stream as this node's when no step of the session is under way or queued.
    private func noteFence(_ fence: NATSFence, of session: String) {
        state.withLock { state in
            guard var chain = state.chains[session] else {
                // Nothing of the session is queued here: what it appends next is made from what was read.
                state.failedSessions[session] = nil
                if state.chains.count < Self.maxTrackedSessions, fence.exists { state.chains[session] = Chain(fence: fence) }
                return
            }
            // An append queued before the read (an earlier copy's) keeps the session's failed mark, if any.
            guard !chain.busy, chain.waiting.isEmpty else { return }
            state.failedSessions[session] = nil
            var fence = fence
            if let known = chain.fence, known.sequence == fence.sequence {
                fence.activity = known.activity
                if fence.recentRecords.isEmpty { fence.recentRecords = known.recentRecords }
            }
            chain.fence = fence
            state.chains[session] = chain
        }
    }

    /// The ids of up to `limit` sessions last active before `time`, oldest first (ties by id): read from the whole
    /// activity bucket.
    /// - Parameters:
    ///   - time: seconds since 1970.
    ///   - limit: how many at most.
    public func sessions(lastActiveBefore time: Int64, limit: Int) throws(SessionStoreError) -> [String] {
        try withClient { () throws(SessionStoreError) -> [String] in
            guard limit > 0, try client.messageCount(of: client.bucketStreamName) > 0 else { return [] }
            let messages = try client.messages(in: client.bucketStreamName, on: activitySubjectPrefix + ">", through: nil)
            var idle: [(id: String, time: Int64)] = []
            for message in messages {
                guard message.subject.hasPrefix(activitySubjectPrefix),
                    let id = NATSLogFormat.session(ofKey: message.subject.dropFirst(activitySubjectPrefix.count)),
                    let active = Int64(String(decoding: message.body, as: UTF8.self)), active < time
                else { continue }
                idle.append((id, active))
            }
            idle.sort { ($0.time, $0.id) < ($1.time, $1.id) }
            return idle.prefix(limit).map(\.id)
        }
    }

    /// How many sessions the store holds: the keys of the activity bucket.
    public func sessionCount() throws(SessionStoreError) -> Int {
        try withClient { () throws(SessionStoreError) -> Int in Int(try client.messageCount(of: client.bucketStreamName)) }
    }

    // MARK: - Changing a session

    /// Publishes a snapshot message to the session's subject (fenced), then purges the messages before it.
    /// - Parameters:
    ///   - snapshot: the snapshot; its number must not be past the session's last record, nor before the
    ///     snapshot it has.
    ///   - session: the session's id; an unknown one is `outOfOrder`.
    public func saveSnapshot(_ snapshot: StoredSnapshot, of session: String) throws(SessionStoreError) {
        try exclusively(session) { (fence: inout NATSFence) throws(SessionStoreError) in
            if let refusal = SessionFence.refusal(
                toSave: snapshot, of: session, lastNumber: fence.exists ? fence.lastNumber : nil, currentSnapshotNumber: fence.floor)
            {
                throw refusal
            }
            let subject = logSubject(session)
            let sequence = try write(
                subject, headers: NATSLogFormat.headers(kind: "snapshot", number: snapshot.number, last: fence.lastNumber, floor: snapshot.number),
                body: snapshot.body, fence: &fence)
            // What it stands for goes (the messages before the first record after it); should the purge fail, or
            // that record's sequence not be known here, reading still skips them and a later snapshot purges them.
            if let boundary = fence.purgeBoundary(forSnapshotThrough: snapshot.number, at: sequence) {
                try? client.purge(client.streamName, subject: subject, before: boundary)
            }
            fence.floor = snapshot.number
            fence.recentRecords.removeAll { $0.number <= snapshot.number }
        }
    }

    /// Writes a `remove` message naming the numbers the session holds (after its snapshot, up to its last record);
    /// reading leaves those records out. Unknown sessions and numbers are ignored.
    /// - Parameters:
    ///   - numbers: the records' numbers.
    ///   - session: the session's id.
    public func removeRecords(_ numbers: [Int], of session: String) throws(SessionStoreError) {
        guard !numbers.isEmpty else { return }
        try exclusively(session) { (fence: inout NATSFence) throws(SessionStoreError) in
            let held = numbers.filter { $0 > fence.floor && $0 <= fence.lastNumber }
            guard fence.exists, !held.isEmpty else { return }
            _ = try write(
                logSubject(session), headers: NATSLogFormat.headers(kind: "remove", number: 0, last: fence.lastNumber, floor: fence.floor),
                body: NATSLogFormat.numberList(held), fence: &fence)
        }
    }

    /// Publishes to a session's subject, fenced, and waits; moves the fence on.
    private func write(
        _ subject: String, headers: [(String, String)], body: [UInt8], fence: inout NATSFence
    ) throws(SessionStoreError) -> UInt64 {
        guard client.isConnected else { throw SessionStoreError(.unavailable, "NATS is not connected") }
        let message = try NATSClient.message(subject: subject, headers: headers, body: body)
        do throws(SessionStoreError) {
            let sequence = try client.publish(message, expecting: NATSExpectation(lastSubjectSequence: fence.sequence))
            fence.sequence = sequence
            return sequence
        } catch {
            fence.isStale = true
            throw error
        }
    }

    /// Writes each session's last activity to the bucket, after its queued appends; a session the bucket has no key
    /// of is ignored (compare-and-set on the key's revision, so a touch never brings back a deleted session).
    /// - Parameter activity: the sessions and their times.
    public func touch(_ activity: [SessionActivity]) throws(SessionStoreError) {
        for entry in activity {
            try exclusively(entry.session) { (fence: inout NATSFence) throws(SessionStoreError) in
                guard fence.exists else { return }
                let key = NATSLogFormat.key(of: entry.session)
                let value = Array(String(entry.time).utf8)
                for _ in 0..<3 {
                    guard let current = try client.value(of: key) else { return }
                    if try client.update(key, to: value, ifRevision: current.revision) {
                        fence.activity = entry.time
                        return
                    }
                }
                throw SessionStoreError(.unavailable, "the activity of session \(entry.session) keeps changing")
            }
        }
    }

    /// Purges the session's subject and its activity key, after its queued appends. Deleting an unknown one is no
    /// error; its numbering starts again at 1.
    /// - Parameter session: the session's id.
    public func delete(_ session: String) throws(SessionStoreError) {
        try exclusively(session) { (fence: inout NATSFence) throws(SessionStoreError) in
            guard client.isConnected else { throw SessionStoreError(.unavailable, "NATS is not connected") }
            fence.isStale = true
            try client.purge(client.streamName, subject: logSubject(session))
            fence = .absent
            // A session made again under this id starts from nothing.
            state.withLock { $0.failedSessions[session] = nil }
            try client.purge(client.bucketStreamName, subject: activitySubject(session))
        }
    }

    // MARK: - Flushing and closing

    /// Returns once every append queued before the call has completed (at once after `close()`, or when called from a
    /// completion).
    public func flush() {
        guard !isDeliveringThread else { return }
        let target = state.withLock { $0.enqueued }
        state.withLock(when: { $0.delivered >= target || $0.isClosed }) { _ in }
    }

    /// Completes what is queued, then closes the connection; later calls fail with `unavailable("closed")`. Called from
    /// a completion, it refuses new work at once and leaves the connection open (it closes with the store).
    public func close() {
        state.withLock { $0.isClosing = true }
        guard !isDeliveringThread else { return }
        let shouldClose = state.withLock(when: { $0.delivered >= $0.enqueued && $0.activeCalls == 0 }) { state in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        state.broadcast()
        if shouldClose {
            router.route(to: nil)
            client.close()
        }
    }

    // MARK: - For tests

    /// The log stream's and the activity bucket's settings as JetStream has them.
    func streamSettings() throws(SessionStoreError) -> (log: NATSStreamSettings, bucket: NATSStreamSettings) {
        try withClient { () throws(SessionStoreError) in
            (try client.settings(of: client.streamName), try client.settings(of: client.bucketStreamName))
        }
    }

    /// How many sessions' fences this node tracks.
    var trackedSessionCount: Int { state.withLock { $0.chains.count } }
}
