import JSONPatch
import Locking
import MVVMR
import MVVMRProtocol
import MicroHTTP
import Synchronization
import Dispatch

/// One client's session as the server holds it: its pages (an `MVVMR.PageSession`), its event log for
/// `Last-Event-ID` replay, its open event streams and its idempotency cache, each bounded by its
/// ``SessionLimits``.
///
/// Lock order: the idempotency lock, then the page session's lock, then `streams`. The page session's
/// event sink and recorder run once its lock is released (one call at a time, in input order) and take
/// `streams`; nothing takes the page session's lock while holding `streams`.
final class ServerSession: SessionOutputReceiver {
    struct StreamState {
        var log: EventLog
        var streams: [ObjectIdentifier: EventStream] = [:]
        var lastSequence = 0
        /// The pages' bytes (views and patch histories) when last measured, and the patch bytes since (all
        /// patches ever, less those the measure already saw): the measure plus twice the patches (each is in a
        /// view and in its page's history) bounds what the pages hold now, so they are measured again only now
        /// and then. Running totals rather than a count taken back, so that two measurements racing (two
        /// actions of one session) cannot take the same patches back twice. An event that may bind or release
        /// pages (a navigation, a snapshot) adds a whole ``ServerSession/patchBytesBeforeMeasuring``, so the
        /// pages are measured again at the next count; a new session starts there too.
        var pageBytesMeasured = 0
        var patchBytesTotal = ServerSession.patchBytesBeforeMeasuring
        var patchBytesTotalMeasured = 0
        var patchBytesSinceMeasured: Int { patchBytesTotal - patchBytesTotalMeasured }
        /// The inputs whose records the store has not confirmed yet, with their events, which no client sees
        /// before then (acknowledged means stored), in input order.
        var unconfirmed = InlineFirstList<UnconfirmedInput>()
        /// The highest input number whose record is stored (every one before it is too).
        var storedThrough = 0
        /// An append failed: what the session holds in memory is ahead of its log, so it must not be used
        /// again (the server restores it from the store instead).
        var storeFailure: SessionStoreError? {
            get { storeFailureBox?.error }
            set { storeFailureBox = newValue.map(StoreFailure.init) }
        }
        /// ``storeFailure``, boxed: a pointer in every session's state instead of the error's three words, for
        /// what happens to few sessions.
        private var storeFailureBox: StoreFailure? = nil
        /// The number of the last record the store's snapshot of the session stands for (0: none).
        var snapshotThrough = 0
        /// No compaction is tried before this record is stored (one that could not be taken waits a while).
        var nextCompactionAttempt = 0
        /// A compaction is queued or running.
        var isCompacting = false
        /// The session ended (beside the other flags: they share one word).
        var expired = false
        /// It ended in memory only, going on in the store (another node took it over, or it was passivated).
        var setAside = false
        /// Answers waiting for an input's record to be stored.
        var waiters = InlineFirstList<DurabilityWaiter>()

        init(log: EventLog) { self.log = log }
    }

    /// A store failure, held by reference (see ``StreamState/storeFailure``).
    final class StoreFailure: Sendable {
        let error: SessionStoreError
        init(_ error: SessionStoreError) { self.error = error }
    }

    /// An input whose record the store has not confirmed yet, with the events it caused.
    struct UnconfirmedInput {
        let number: Int
        let events: [SessionEvent]
    }

    /// An answer waiting for input `number`'s record to be stored (or to fail).
    struct DurabilityWaiter {
        let number: Int
        let notify: @Sendable (SessionStoreError?) -> Void
    }

    /// Whether an input's record is stored.
    enum Durability {
        /// Stored: what it caused may be acknowledged.
        case stored
        /// Not yet: the notification comes when it is (or fails).
        case waiting
        /// The store could not take it (or an input before it).
        case failed(SessionStoreError)
        /// The copy was set aside (``wasSetAside``) before anything the request did reached the store: the request is
        /// to be run again on the session restored from the store.
        case setAside
        /// The session ended (deleted, expired) before anything the request did reached the store: to the client it is
        /// unknown, as it would be a moment later.
        case ended
    }

    /// What `attach` did.
    enum Attachment: Equatable {
        case attached
        case expired
        case tooManyStreams
    }

    /// What the session has taken of topic messages: the ids of the last ones (from its log, and live), so that
    /// none is taken twice; and, while it catches up after a restore, the live ones held back until it is done, so
    /// that they come after the ones it missed.
    struct TopicIntake {
        /// Hashes of the ids of the last ``remembered`` messages taken, and the same in the order taken.
        var seen: Set<Int> = []
        var order: [Int] = []
        /// Catch-ups under way (live messages are held meanwhile).
        var catchingUp = 0
        var held: [TopicMessage] = []
        /// While a restored session joins its topics: each topic's recent messages on this node, as its pages'
        /// subscriptions are registered, for the catch-up; nil otherwise.
        var missed: [[RecentTopicMessage]]?
        /// For a restored session, the wall-clock time of the last record its log holds: where it stands when
        /// none of a topic's recent messages is one it took (a log with no message yet).
        var lastRecordedAt: Duration?

        /// How many ids are remembered: as many as a node keeps of a topic's recent messages.
        static let remembered = TopicFanout.recentLimit

        func hasTaken(_ id: String) -> Bool { seen.contains(id.hashValue) }

        mutating func note(_ id: String) {
            guard seen.insert(id.hashValue).inserted else { return }
            order.append(id.hashValue)
            if order.count > Self.remembered * 2 {
                for old in order.prefix(order.count - Self.remembered) { seen.remove(old) }
                order.removeFirst(order.count - Self.remembered)
            }
        }
    }

    /// What few sessions need, each made when first needed, behind one reference made with the first of them:
    /// an idle session keeps one word for them.
    final class Rarities: Sendable {
        /// Made when the session first takes a topic message (or is restored): a session whose pages listen to no
        /// topic never needs it.
        let topicIntake = LazyReference<Locked<TopicIntake>>()
        /// Made on the first `Idempotency-Key`: most sessions never send one (its bytes' count lives here too).
        let idempotency = LazyReference<IdempotencyState>()
        /// The order of the claim a restored session was restored from (``SessionClaim/order``; 0: made here).
        let claimOrder = Atomic<UInt64>(0)
    }

    private let raritiesStorage = LazyReference<Rarities>()
    /// The session's rare parts, made now if they were not.
    private var rarities: Rarities { raritiesStorage.load(orStoring: Rarities()) }

    /// The topic messages taken; see ``TopicIntake``.
    var topicIntake: Locked<TopicIntake> {
        rarities.topicIntake.load(orStoring: Locked(TopicIntake()))
    }

    /// Patch bytes after which the pages are measured again rather than estimated.
    static let patchBytesBeforeMeasuring = 65_536

    let identifier: String
    let pages: PageSession
    /// Its server's limits, store and compaction, shared by every session of the server.
    let environment: SessionEnvironment
    /// Where the session's input log goes.
    var store: any SessionStore { environment.store }
    /// When the session's log is compacted; nil: never.
    private var compaction: SessionCompaction? { environment.compaction }
    /// What the session may hold (its server's, shared).
    var limits: SessionLimits { environment.limits }
    let streamState: Locked<StreamState>
    /// The number of the last input whose record was queued for the store (for a restored copy, at first the
    /// stored log's last), written with `streamState` held: a request notes it when it finds the session
    /// (``Acknowledgement/uses(_:recordsNothingWhenItThrows:)``), and finds it unchanged if nothing it did reached the
    /// store.
    private let acceptedThrough = Atomic<Int>(0)
    /// The idempotency cache behind its own lock, and its bytes.
    final class IdempotencyState: Sendable {
        let cache: Locked<IdempotencyCache>
        /// The cache's bytes, mirrored here so that the session's total can be read while the cache's lock is held
        /// (a keyed action checks the total inside it).
        let byteCount = Atomic<Int>(0)

        init(_ cache: IdempotencyCache) { self.cache = Locked(cache) }
    }

    /// The session's idempotency cache, behind its own lock (made on the first `Idempotency-Key`).
    var idempotency: Locked<IdempotencyCache> {
        rarities.idempotency.load(
            orStoring: IdempotencyState(
                IdempotencyCache(
                    retention: limits.idempotencyRetention, capacity: limits.idempotencyKeys,
                    byteLimit: limits.idempotencyBytes))
        ).cache
    }

    /// The claim of the store's log this copy was restored from (``SessionClaim/unordered`` for a session made
    /// here): another node's notice drops the copy only for a later claim (``PageServer/dropCopyTakenOver(_:claim:)``).
    var claim: SessionClaim {
        get { SessionClaim(order: raritiesStorage.load()?.claimOrder.load(ordering: .acquiring) ?? 0) }
        set { rarities.claimOrder.store(newValue.order, ordering: .releasing) }
    }

    /// The idempotency state when the session ever sent a key; nil otherwise (reading this makes nothing).
    private var existingIdempotency: IdempotencyState? { raritiesStorage.load()?.idempotency.load() }

    /// The idempotency cache's bytes as last noted (0 for a session that never sent a key).
    var idempotencyBytes: Int { existingIdempotency?.byteCount.load(ordering: .relaxed) ?? 0 }

    /// Notes the idempotency cache's bytes after a change (with the cache's lock held).
    /// - Parameter count: the cache's `byteCount` now.
    func noteIdempotencyBytes(_ count: Int) {
        existingIdempotency?.byteCount.store(count, ordering: .relaxed)
    }

    /// A session with its own copy of `limits` (tests; a server shares one, see the other initialiser).
    convenience init(
        identifier: String, registry: UnitRegistry, services: Services, limits: SessionLimits = SessionLimits(),
        store: any SessionStore = MemorySessionStore(), topicFanout: TopicFanout? = nil
    ) {
        self.init(
            identifier: identifier,
            environment: SessionEnvironment(
                registry: registry, services: services, limits: limits, store: store, topicFanout: topicFanout))
    }

    /// A session whose inputs are logged to its environment's store.
    /// - Parameters:
    ///   - environment: its server's limits, store and compaction.
    ///   - restoring: made to replay a stored log into (virtual clock, nothing logged until
    ///     ``startLogging(storedThrough:)``); a new session logs from its first input.
    init(
        identifier: String, environment: SessionEnvironment, restoring: Bool = false
    ) {
        self.identifier = identifier
        self.environment = environment
        streamState = Locked(StreamState(log: EventLog()))
        pages = PageSession(settings: environment.pageSettings, clock: restoring ? .virtual : .realTime)
        if !restoring { startLogging(storedThrough: 0) }
    }

    /// From now on every input's record goes to the store, and what it caused reaches clients once it is
    /// stored. With a store that keeps nothing, no record is made: events go out as they happen.
    /// - Parameter storedThrough: the number of the last record the store already holds.
    func startLogging(storedThrough: Int) {
        guard store.keepsSessions else {
            streamState.withLock { $0.storedThrough = .max }
            receiveFromPages(.events)
            return
        }
        streamState.withLock { state in
            state.storedThrough = storedThrough
            acceptedThrough.store(storedThrough, ordering: .relaxed)
        }
        receiveFromPages(.records)
    }

    /// From now on the session also receives `kinds` of its pages' output (it is their receiver, held weakly there:
    /// no closure per live session).
    private func receiveFromPages(_ kinds: SessionOutputKinds) {
        pages.setReceiver(self, for: pages.receiverKinds.union(kinds))
    }

    /// An input's record, in input order, one call at a time, once the input's step released the page session's
    /// lock: queued for the store, its events held until it is stored.
    func sessionRecorded(_ record: InputRecord, events: [SessionEvent]) {
        let number = record.number
        var orphaned: [@Sendable (SessionStoreError?) -> Void] = []
        let accepted = streamState.withLock { state -> Bool in
            // A spoiled session is ahead of its log and is being restored from it: none of its later records may
            // reach the store, where one could follow a record of the restored session and pass the number fence
            // (the request is answered 503 anyway). One that passes this check is queued before the page
            // session's `releaseAll()` returns, which the restore waits for (``expire(reason:)``), so it is
            // queued before any record of the restored session.
            guard state.storeFailure == nil else { return false }
            // A copy set aside or ended takes no more: what it did after that reaches neither the store nor a client
            // (a request that made it is run again on the restored session, or told the session is gone). Whoever
            // waits for this input, or a later one, waited before the copy left memory: told now, it never will be.
            guard !state.expired else {
                state.waiters.removeAll(where: { $0.number >= number }, handing: { orphaned.append($0.notify) })
                return false
            }
            state.unconfirmed.append(UnconfirmedInput(number: number, events: events))
            acceptedThrough.store(number, ordering: .relaxed)
            return true
        }
        guard accepted else {
            if !orphaned.isEmpty {
                let refusal = SessionStoreError(.outOfOrder, "the session's copy left memory before input \(number) was recorded")
                for notify in orphaned { notify(refusal) }
            }
            return
        }
        store.append(
            StoredRecord(session: identifier, number: number, body: record.jsonBytes),
            lastActive: SystemTime.secondsSince1970()
        ) { [weak self] outcome in
            self?.recordStored(number, outcome: outcome)
        }
    }

    /// An event of a session whose store keeps nothing: it goes out as it happens.
    func sessionProduced(_ event: SessionEvent) {
        // One event (an action's patch, the usual case) is published as it is, with no array around it.
        let bounds = limits.eventLogBounds
        streamState.withLock { state in Self.publish(event, in: &state, within: bounds) }
    }

    /// Publishes `events` (already stored, or replayed from the store): into the event log and to every open
    /// stream, in sequence order.
    func publish(_ events: [SessionEvent]) {
        let bounds = limits.eventLogBounds
        streamState.withLock { state in Self.publish(events, in: &state, within: bounds) }
    }

    private static func publish(_ events: [SessionEvent], in state: inout StreamState, within bounds: EventLog.Bounds) {
        for index in events.indices { publish(events[index], in: &state, within: bounds) }
    }

    /// Publishes one event: into the event log and to every open stream.
    private static func publish(_ event: SessionEvent, in state: inout StreamState, within bounds: EventLog.Bounds) {
        state.lastSequence = event.sequence
        let byteCount: Int
        if state.streams.isEmpty {
            // Framed only when a stream takes it.
            byteCount = EstimatedBytes.frame(event)
            state.log.append(event, byteCount: byteCount, within: bounds)
        } else {
            let frame = event.frame
            byteCount = frame.count
            state.log.append(sequence: event.sequence, frame: frame, within: bounds)
            for stream in state.streams.values { stream.send(bytes: frame) }
        }
        // Pages may have been bound or released (a navigation, a snapshot): counted as a whole measuring
        // threshold of patches, so that the next count measures the pages again.
        if case .patch = event.kind {
            state.patchBytesTotal += byteCount
        } else {
            state.patchBytesTotal += ServerSession.patchBytesBeforeMeasuring
        }
    }

    /// The store's answer for input `number`: its events go out (and those of every input before it), and the
    /// answers waiting for them are sent; or the session is spoiled.
    private func recordStored(_ number: Int, outcome: Result<Void, SessionStoreError>) {
        let compactionThreshold = compaction?.afterRecords ?? .max
        let bounds = limits.eventLogBounds
        var compactNow = false
        let (ready, failure, streams) = streamState.withLock {
            state -> ([@Sendable (SessionStoreError?) -> Void], SessionStoreError?, [EventStream]) in
            switch outcome {
            case .success:
                if state.storeFailure != nil { return ([], nil, []) }
                state.storedThrough = max(state.storedThrough, number)
                if !state.isCompacting, state.storedThrough - state.snapshotThrough >= compactionThreshold,
                    state.storedThrough >= state.nextCompactionAttempt
                {
                    state.isCompacting = true
                    compactNow = true
                }
                // Inputs are queued in number order, so those stored now are a prefix.
                while let input = state.unconfirmed.removeFirst(if: { $0.number <= number }) {
                    Self.publish(input.events, in: &state, within: bounds)
                }
                var ready: [@Sendable (SessionStoreError?) -> Void] = []
                state.waiters.removeAll(where: { $0.number <= number }, handing: { ready.append($0.notify) })
                return (ready, nil, [])
            case .failure(let error):
                if state.storeFailure == nil { state.storeFailure = error }
                _ = state.unconfirmed.removeAll()
                let ready = state.waiters.removeAll().map(\.notify)
                // Their clients resume from the log of the session restored from the store.
                let streams = Array(state.streams.values)
                state.streams = [:]
                return (ready, state.storeFailure, streams)
            }
        }
        for notify in ready { notify(failure) }
        for stream in streams { stream.close() }
        // Never from here: this is the store's completion, and saving a snapshot waits for the store's writer.
        if compactNow, let compaction { compaction.queue.async { [weak self] in self?.compact() } }
    }

    // MARK: - Compaction

    /// Takes a snapshot of the session and has the store keep it instead of the records it stands for (those of
    /// released pages go with them); on the compaction queue, never on a request's thread or in a store's
    /// completion. A session that cannot be written down now (see ``PageSession/takeSnapshot(annotation:recordCap:)``)
    /// is tried again some records later.
    func compact() {
        guard let compaction else { return }
        var saved: Int?
        defer {
            streamState.withLock { state in
                state.isCompacting = false
                if let saved {
                    state.snapshotThrough = max(state.snapshotThrough, saved)
                } else {
                    state.nextCompactionAttempt = state.storedThrough + compaction.retryAfterRecords
                }
            }
        }
        guard !isSpoiled else { return }
        // The idempotency lock first (lock order): every keyed action before the snapshot has its answer cached.
        let snapshot = idempotency.withLock { cache in
            pages.takeSnapshot(annotation: Self.snapshotAnnotation(cache), recordCap: compaction.recordCap)
        }
        guard let snapshot else { return }
        // The records it stands for must be stored (all are queued already); a failed one spoils the session, and
        // one refused because the copy left memory meanwhile never will be.
        waitUntilStored(snapshot.number)
        guard !isSpoiled, !hasLeftMemory else { return }
        do throws(SessionStoreError) {
            try store.saveSnapshot(StoredSnapshot(number: snapshot.number, body: snapshot.json.jsonBytes), of: identifier)
            saved = snapshot.number
            compaction.compactions.increment()
        } catch {
            // The session ended meanwhile (outOfOrder), or the store cannot write now: its log stays as it is.
            compaction.logger.log(
                error.kind == .outOfOrder ? .debug : .warning, "session_compaction_failed",
                [("session", .string(SessionIdentifier.redacted(identifier))), ("error", .string(error.description))])
        }
    }

    /// What a snapshot keeps for the server: the idempotent answers still kept, so a keyed retry of an action
    /// the snapshot stands for still gets its first answer once the session is restored from it.
    static func snapshotAnnotation(_ cache: IdempotencyCache) -> JSONValue? {
        let entries = cache.keptEntries
        if entries.isEmpty { return nil }
        return [
            "idempotency": .array(
                entries.map { item in
                    var answer: JSONObject = [
                        "key": .string(item.key), "unit": .string(item.entry.unit),
                        "request_digest": .string(String(item.entry.requestDigest, radix: 16)),
                        "status": .int(item.entry.status), "body": .string(String(decoding: item.entry.body, as: UTF8.self)),
                    ]
                    if let number = item.entry.inputNumber { answer["number"] = .int(number) }
                    return .object(answer)
                })
        ]
    }

    /// Whether input `number`'s record is stored; when not yet, `notify` runs once it is (with nil) or once it
    /// failed (with the error). An input number of nil (the request logged nothing) counts as stored, unless
    /// the session is spoiled.
    func durability(of number: Int?, notify: @escaping @Sendable (SessionStoreError?) -> Void) -> Durability {
        durability(of: number, makingNotification: { notify })
    }

    /// The mark a request takes when it finds the session, for ``durability(of:acceptedSince:recordedNothing:makingNotification:)``.
    var acceptedInputMark: Int { acceptedThrough.load(ordering: .relaxed) }

    /// ``durability(of:notify:)``, with the notification made only when the record is not stored yet: a request
    /// whose input is stored already (a read, any request with the memory store) allocates nothing for it.
    /// - Parameters:
    ///   - mark: the ``acceptedInputMark`` the request took when it found the session (nil: none taken): when the
    ///     copy was set aside and no record was queued since, the answer is ``Durability/setAside``.
    ///   - recordedNothing: the request is known to have recorded no input (it failed where failing changes
    ///     nothing): when the copy was set aside, the answer is ``Durability/setAside`` whatever was queued since.
    func durability(
        of number: Int?, acceptedSince mark: Int? = nil, recordedNothing: Bool = false,
        makingNotification makeNotification: () -> @Sendable (SessionStoreError?) -> Void
    ) -> Durability {
        streamState.withLock { state in
            if let failure = state.storeFailure { return .failed(failure) }
            if state.expired {
                let accepted = acceptedThrough.load(ordering: .relaxed)
                // Nothing the request did reached the store: it recorded nothing, or no record was queued since it
                // found the copy (another request's record may have been), or its own record was refused (the copy
                // had ended), so it never will be.
                // (An answer that shows an input, `number`, is never taken for one that recorded nothing.)
                let untouched = (recordedNothing && number == nil) || (mark.map { $0 == accepted } ?? false)
                let refused = number.map { $0 > state.storedThrough && $0 > accepted } ?? false
                if untouched || refused {
                    // Run again on the session restored from the store, or, the session having ended (deleted,
                    // expired), told so rather than shown its released copy.
                    return state.setAside ? .setAside : .ended
                }
            }
            guard let number, number > state.storedThrough else { return .stored }
            state.waiters.append(DurabilityWaiter(number: number, notify: makeNotification()))
            return .waiting
        }
    }

    /// Whether this copy left memory to go on in the store (another node took the session over, or it was
    /// passivated), its pages released, with no store failure: a request that found it before is run again on the
    /// session as the store has it, unless something it did was queued for the store first (see
    /// ``durability(of:acceptedSince:recordedNothing:makingNotification:)``).
    var wasSetAside: Bool { streamState.withLock { $0.expired && $0.setAside && $0.storeFailure == nil } }

    /// Whether this copy ended in memory (set aside or ended: ``expire(reason:)``).
    var hasLeftMemory: Bool { streamState.withLock { $0.expired } }

    /// The store failed an append of this session: it must not serve another request (see ``StreamState/storeFailure``).
    var isSpoiled: Bool { streamState.withLock { $0.storeFailure != nil } }

    /// The bytes the session holds, counted conservatively: its event log and idempotency cache by their
    /// own counts, its pages (views and patch histories) as last measured plus twice the patches since
    /// (measured again after ``patchBytesBeforeMeasuring`` bytes of patches, or once pages were bound or
    /// released). Never called with the streams lock held (it may take the page session's lock).
    func heldBytes() -> Int {
        let (logBytes, measured, growth, patchTotal) = streamState.withLock { state in
            (state.log.byteCount, state.pageBytesMeasured, state.patchBytesSinceMeasured, state.patchBytesTotal)
        }
        var pageBytes = measured + 2 * growth
        if growth >= Self.patchBytesBeforeMeasuring {
            // A view's text is cached until its next change, so measuring an unchanged page encodes nothing.
            pageBytes = pages.pageByteCount
            streamState.withLock { state in
                // Only a measurement that saw more than the last one recorded replaces it.
                guard patchTotal >= state.patchBytesTotalMeasured else { return }
                state.pageBytesMeasured = pageBytes
                state.patchBytesTotalMeasured = patchTotal
            }
        }
        return logBytes + pageBytes + idempotencyBytes
    }

    /// Refuses a state-changing action while the session holds ``SessionLimits/sessionBytes`` or more.
    /// - Parameter droppingExpiredResponses: whether to drop the idempotency cache's expired responses
    ///   before refusing (they may be what fills the session); `false` when the caller holds the cache's
    ///   lock and has just dropped them.
    func requireRoomToGrow(droppingExpiredResponses: Bool = true) throws(ProtocolError) {
        if heldBytes() < limits.sessionBytes { return }
        if droppingExpiredResponses, let cache = existingIdempotency?.cache {
            let now = ContinuousClock.now
            cache.withLock { cache in
                cache.dropExpired(now: now)
                noteIdempotencyBytes(cache.byteCount)
            }
            if heldBytes() < limits.sessionBytes { return }
        }
        throw .sessionTooLarge(limit: limits.sessionBytes)
    }

    /// The number of open event streams.
    var openStreamCount: Int { streamState.withLock { $0.streams.count } }

    /// Attaches an event stream: replays the events after `lastEventID` from the log, or, when the log no
    /// longer reaches that far (or the id is ahead of the session), sends a snapshot of every live page;
    /// then streams every new event. Refuses a stream beyond ``SessionLimits/streamsPerSession``, and
    /// one for a session that has ended.
    func attach(_ stream: EventStream, lastEventID: Int?) -> Attachment {
        enum Step {
            case done(Attachment)
            case needsSnapshots(since: Int)
        }
        let streamsPerSession = limits.streamsPerSession
        let step = streamState.withLock { state -> Step in
            if state.expired { return .done(.expired) }
            if state.streams.count >= streamsPerSession { return .done(.tooManyStreams) }
            if let lastEventID {
                if lastEventID > state.lastSequence { return .needsSnapshots(since: state.lastSequence) }
                guard let frames = state.log.frames(after: lastEventID) else {
                    return .needsSnapshots(since: state.lastSequence)
                }
                for frame in frames { stream.send(bytes: frame) }
            }
            state.streams[ObjectIdentifier(stream)] = stream
            return .done(.attached)
        }
        switch step {
        case .done(let attachment):
            return attachment
        case .needsSnapshots(let since):
            // Read the pages outside `streams` (lock order), then send them, then whatever happened
            // since `since` from the log, and go live: events both in the snapshots and replayed are
            // harmless, since a client ignores a patch whose rev is not newer than its own.
            let snapshots = pages.pages
            return streamState.withLock { state in
                if state.expired { return .expired }
                if state.streams.count >= streamsPerSession { return .tooManyStreams }
                for snapshot in snapshots {
                    stream.send(
                        bytes: WireEvent.snapshot(snapshot.wire).frame(sequence: since))
                }
                for frame in state.log.frames(after: since) ?? [] { stream.send(bytes: frame) }
                state.streams[ObjectIdentifier(stream)] = stream
                return .attached
            }
        }
    }

    /// Detaches an event stream (it ended).
    func detach(_ stream: EventStream) {
        streamState.withLock { _ = $0.streams.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    /// Ends the session in memory: every stream gets an `expired` event (when there is a `reason`; without one,
    /// the session goes on in the store and its clients' streams just close, to resume from the session
    /// restored) and closes; every page is released.
    func expire(reason: String?) {
        let streams = streamState.withLock { state -> [EventStream] in
            state.expired = true
            state.setAside = reason == nil
            let streams = Array(state.streams.values)
            state.streams = [:]
            return streams
        }
        let frame = reason.map { WireEvent.expired(WireExpiredEvent(reason: $0)).frame(sequence: nil) }
        for stream in streams {
            if let frame { stream.send(bytes: frame) }
            stream.close()
        }
        pages.releaseAll()
    }

    // MARK: - Topics

    /// From now on the topics this session's pages listen to are registered with its environment's topic fanout
    /// (and unregistered when the pages are released), and the values they publish go to it once the input that published them is stored.
    /// Called once the session is live: a new session before its first page, a restored one after its replay.
    /// - Parameter catchingUp: a restored session takes, on each topic its pages listen to, the messages the node
    ///   kept that came after the last one its log holds (those it missed while it was away), before any live one.
    func joinTopics(catchingUp: Bool = false) {
        if catchingUp {
            topicIntake.withLock { intake in
                intake.catchingUp += 1
                intake.missed = intake.missed ?? []
            }
        }
        receiveFromPages(.topics)
        guard catchingUp else { return }
        // The `subscribed` events may be handed out by another thread (one delivering the session's outbox already):
        // they are all out once this returns.
        pages.waitUntilDelivered()
        let (caughtUp, intake) = topicIntake.withLock { intake -> ([[RecentTopicMessage]], TopicIntake) in
            defer { intake.missed = nil }
            return (intake.missed ?? [], intake)
        }
        // Every topic's missed messages, in the order they came (a page listening to two sees them as a live one did).
        let missedMessages = caughtUp.flatMap { Self.missedMessages(in: $0, intake: intake) }
            .enumerated().sorted { ($0.element.arrived, $0.offset) < ($1.element.arrived, $1.offset) }
        for entry in missedMessages { _ = take(entry.element.message) }
        // Then the live ones that came meanwhile, in the order they came.
        while let next = topicIntake.withLock({ intake -> TopicMessage? in
            if intake.held.isEmpty {
                intake.catchingUp -= 1
                return nil
            }
            return intake.held.removeFirst()
        }) {
            _ = take(next)
        }
    }

    /// Of a topic's recent messages on this node (oldest first), those after the last one the session took, that it
    /// did not take. When it took none of them, those that came after its last record; none when that is not known
    /// either (it cannot tell where it stands).
    static func missedMessages(in recent: [RecentTopicMessage], intake: TopicIntake) -> [RecentTopicMessage] {
        let after: ArraySlice<RecentTopicMessage>
        if let last = recent.lastIndex(where: { $0.message.id.map(intake.hasTaken) ?? false }) {
            after = recent[(last + 1)...]
        } else if let since = intake.lastRecordedAt {
            after = recent.drop { $0.arrived <= since }
        } else {
            return []
        }
        return after.filter { entry in entry.message.id.map { !intake.hasTaken($0) } ?? false }
    }

    /// Notes what a replayed log says of the topic messages the session took: the ids its records hold, and when
    /// its last record was made.
    /// - Parameters:
    ///   - records: the log's records (after its snapshot, if any).
    ///   - snapshot: its snapshot, if any.
    func noteTakenTopicMessages(in records: [InputRecord], after snapshot: SessionSnapshot? = nil) {
        var origin = snapshot?.wallClock
        for record in records {
            if case .start(_, _, _, _, let wallClock) = record.input { origin = wallClock }
        }
        let lastTime = records.last?.time ?? snapshot?.time
        topicIntake.withLock { intake in
            for record in records {
                if case .topic = record.input, let id = TopicMessage.id(inAnnotation: record.annotation) { intake.note(id) }
            }
            if let origin, let lastTime, origin > .zero { intake.lastRecordedAt = origin + lastTime }
        }
    }

    /// A topic the session's pages started or stopped listening to, or a value they published (in input order,
    /// outside the page session's lock, one call at a time): carried to the fanout the session joined.
    func sessionTopicChanged(_ event: TopicEvent) {
        // Handed topic events only once it joined (its receiver takes them from then on).
        guard let fanout = environment.topicFanout else { return }
        switch event {
        case .subscribed(let topic):
            let recent = fanout.add(self, to: topic)
            // Installing the receiver hands it the topics the pages listen to already: those are caught up on (the
            // intake exists, with its list of missed messages, only while a catch-up is under way).
            raritiesStorage.load()?.topicIntake.load()?.withLock { intake in intake.missed?.append(recent) }
        case .unsubscribed(let topic):
            fanout.remove(self, from: topic)
        case .published(let message, let input):
            // Acknowledged means stored: the value leaves the session once the input that published it is stored.
            // A failed append loses the input, and with it what it published.
            let durability = durability(of: input) { failure in
                if failure == nil { fanout.publish(message) }
            }
            if case .stored = durability { fanout.publish(message) }
        }
    }

    /// Hands a topic message to the pages listening to it, as an input of the session, unless it took the
    /// message already; while the session catches up after a restore, a live message waits for it. An ended or
    /// spoiled session takes none.
    /// - Returns: whether a page of the session took it (or will, once caught up).
    func receive(_ message: TopicMessage) -> Bool {
        let held = topicIntake.withLock { intake -> Bool in
            guard intake.catchingUp > 0 else { return false }
            intake.held.append(message)
            return true
        }
        return held || take(message)
    }

    /// Hands a topic message to the pages, once: not when the session took one with its id already.
    private func take(_ message: TopicMessage) -> Bool {
        if streamState.withLock({ $0.expired || $0.storeFailure != nil }) { return false }
        if let id = message.id {
            let isNew = topicIntake.withLock { intake -> Bool in
                if intake.hasTaken(id) { return false }
                intake.note(id)
                return true
            }
            if !isNew { return false }
        }
        return pages.receive(message) != nil
    }

    // MARK: - Restoring

    /// The annotation an idempotent action's record carries: its key and its request's digest.
    static func idempotencyAnnotation(key: String, requestDigest: UInt64) -> JSONValue {
        ["idempotency_key": .string(key), "request_digest": .string(String(requestDigest, radix: 16))]
    }

    /// Replays a stored log into this session (made with `restoring: true`): its pages, event log (for
    /// `Last-Event-ID`) and idempotent answers come back as they were.
    /// - Parameters:
    ///   - snapshot: the log's snapshot, if it was compacted (its pages and kept answers come back first).
    ///   - records: the log (after the snapshot), in order.
    ///   - recordCap: the most action records a page may have to be replayed (past it, it is bound fresh).
    /// - Returns: what the replay found.
    func restore(from snapshot: SessionSnapshot? = nil, records: [InputRecord], recordCap: Int = .max) -> RestoreReport {
        let now = ContinuousClock.now
        var answers: [(key: String, unit: String, digest: UInt64, status: Int, body: [UInt8], number: Int?)] = []
        if let snapshot {
            // Its events are gone: a resume from before it gets snapshots of the pages.
            streamState.withLock { state in
                state.lastSequence = snapshot.sequence
                state.log.startAfter(snapshot.sequence)
                state.snapshotThrough = snapshot.number
            }
            for answer in snapshot.annotation?["idempotency"]?.arrayValue ?? [] {
                guard let key = answer["key"]?.stringValue, let unit = answer["unit"]?.stringValue,
                    let digest = answer["request_digest"]?.stringValue.flatMap({ UInt64($0, radix: 16) }),
                    let status = answer["status"]?.intValue, let body = answer["body"]?.stringValue
                else { continue }
                answers.append((key, unit, digest, status, Array(body.utf8), answer["number"]?.intValue))
            }
        }
        let report = pages.restore(from: snapshot, records: records, recordCap: recordCap) { record, events, result in
            publish(events)
            guard let result, case .object(let note)? = record.annotation,
                let key = note["idempotency_key"]?.stringValue,
                let digest = note["request_digest"]?.stringValue.flatMap({ UInt64($0, radix: 16) }),
                case .action(let unit, _, _, _) = record.input
            else { return }
            answers.append((key, unit, digest, 200, result.responseBody, record.number))
        }
        if !answers.isEmpty {
            idempotency.withLock { cache in
                for answer in answers {
                    cache.store(
                        key: answer.key, unit: answer.unit, requestDigest: answer.digest, status: answer.status,
                        body: answer.body,
                        inputNumber: answer.number, now: now)
                }
                noteIdempotencyBytes(cache.byteCount)
            }
        }
        return report
    }

    /// Blocks until input `number`'s record is stored or failed (a rare path: a restored page bound fresh).
    func waitUntilStored(_ number: Int) {
        let done = DispatchSemaphore(value: 0)
        if case .waiting = durability(of: number, notify: { _ in done.signal() }) { done.wait() }
    }
}
