import JSONPatch
import Locking
import MVVMR
import MicroHTTP
import Synchronization

/// One client's session as the server holds it: its pages (an `MVVMR.PageSession`), its event log for
/// `Last-Event-ID` replay, its open event streams and its idempotency cache, each bounded by its
/// ``SessionLimits``.
///
/// Lock order: the idempotency lock, then the page session's lock, then `streams`. The page session's
/// event sink runs inside the page session's lock and takes `streams`; nothing takes the page session's
/// lock while holding `streams`.
final class ServerSession: Sendable {
    struct StreamState {
        var log: EventLog
        var streams: [ObjectIdentifier: EventStream] = [:]
        var lastSequence = 0
        var expired = false
        /// The pages' bytes (views and patch histories) when last measured, and the patch bytes since (all
        /// patches ever, less those the measure already saw): the measure plus twice the patches (each is in a
        /// view and in its page's history) bounds what the pages hold now, so they are measured again only now
        /// and then. Running totals rather than a count taken back, so that two measurements racing (two
        /// actions of one session) cannot take the same patches back twice.
        var pageBytesMeasured = 0
        var patchBytesTotal = 0
        var patchBytesTotalMeasured = 0
        var patchBytesSinceMeasured: Int { patchBytesTotal - patchBytesTotalMeasured }
        /// Bumped when pages may have been bound or released (navigation, snapshot): measure again.
        var pageSetVersion = 1
        var pageSetVersionMeasured = 0
    }

    /// What `attach` did.
    enum Attachment: Equatable {
        case attached
        case expired
        case tooManyStreams
    }

    /// Patch bytes after which the pages are measured again rather than estimated.
    static let patchBytesBeforeMeasuring = 65_536

    let identifier: String
    let pages: PageSession
    private let sharedLimits: SharedSessionLimits
    /// What the session may hold (its server's, shared).
    var limits: SessionLimits { sharedLimits.limits }
    let streamState: Locked<StreamState>
    /// The idempotency cache's bytes, mirrored here so that the session's total can be read while the
    /// idempotency lock is held (a keyed action checks the total inside it).
    let idempotencyBytes = Atomic<Int>(0)
    /// Made on the first `Idempotency-Key`: most sessions never send one, and an idle session should cost
    /// as little as possible.
    private let idempotencyStorage = AtomicLazyReference<Locked<IdempotencyCache>>()

    /// The session's idempotency cache, behind its own lock.
    var idempotency: Locked<IdempotencyCache> {
        idempotencyStorage.load()
            ?? idempotencyStorage.storeIfNil(
                Locked(
                    IdempotencyCache(
                        retention: limits.idempotencyRetention, capacity: limits.idempotencyKeys,
                        byteLimit: limits.idempotencyBytes)))
    }

    /// A session with its own copy of `limits` (tests; a server shares one, see the other initialiser).
    convenience init(identifier: String, registry: UnitRegistry, services: Services, limits: SessionLimits = SessionLimits()) {
        self.init(identifier: identifier, registry: registry, services: services, sharedLimits: SharedSessionLimits(limits))
    }

    init(identifier: String, registry: UnitRegistry, services: Services, sharedLimits: SharedSessionLimits) {
        self.identifier = identifier
        self.sharedLimits = sharedLimits
        let limits = sharedLimits.limits
        let streamState = Locked(
            StreamState(log: EventLog(capacity: limits.eventLogCount, byteLimit: limits.eventLogBytes)))
        self.streamState = streamState
        pages = PageSession(
            registry: registry, services: services, historyByteLimit: limits.pageHistoryBytes
        ) { event in
            // Runs inside the page session's lock, in sequence order. Framed only when a stream takes it.
            streamState.withLock { state in
                state.lastSequence = event.sequence
                let byteCount: Int
                if state.streams.isEmpty {
                    byteCount = EstimatedBytes.frame(event)
                    state.log.append(event, byteCount: byteCount)
                } else {
                    let frame = ProtocolEncoding.frame(event)
                    byteCount = frame.count
                    state.log.append(sequence: event.sequence, frame: frame)
                    for stream in state.streams.values { stream.send(bytes: frame) }
                }
                if case .patch = event.kind {
                    state.patchBytesTotal += byteCount
                } else {
                    state.pageSetVersion += 1
                }
            }
        }
    }

    /// The bytes the session holds, counted conservatively: its event log and idempotency cache by their
    /// own counts, its pages (views and patch histories) as last measured plus twice the patches since
    /// (measured again after ``patchBytesBeforeMeasuring`` bytes of patches, or once pages were bound or
    /// released). Never called with the streams lock held (it may take the page session's lock).
    func heldBytes() -> Int {
        let (logBytes, measured, growth, patchTotal, version, measuredVersion) = streamState.withLock { state in
            (
                state.log.byteCount, state.pageBytesMeasured, state.patchBytesSinceMeasured, state.patchBytesTotal,
                state.pageSetVersion, state.pageSetVersionMeasured
            )
        }
        var pageBytes = measured + 2 * growth
        if growth >= Self.patchBytesBeforeMeasuring || version != measuredVersion {
            // A view's text is cached until its next change, so measuring an unchanged page encodes nothing.
            pageBytes = pages.pageByteCount
            streamState.withLock { state in
                // Only a measurement that saw more than the last one recorded replaces it.
                guard patchTotal >= state.patchBytesTotalMeasured else { return }
                state.pageBytesMeasured = pageBytes
                state.patchBytesTotalMeasured = patchTotal
                state.pageSetVersionMeasured = max(state.pageSetVersionMeasured, version)
            }
        }
        return logBytes + pageBytes + idempotencyBytes.load(ordering: .relaxed)
    }

    /// Refuses a state-changing action while the session holds ``SessionLimits/sessionBytes`` or more.
    /// - Parameter droppingExpiredResponses: whether to drop the idempotency cache's expired responses
    ///   before refusing (they may be what fills the session); `false` when the caller holds the cache's
    ///   lock and has just dropped them.
    func requireRoomToGrow(droppingExpiredResponses: Bool = true) throws(ProtocolError) {
        if heldBytes() < limits.sessionBytes { return }
        if droppingExpiredResponses, let cache = idempotencyStorage.load() {
            let now = ContinuousClock.now
            cache.withLock { cache in
                cache.dropExpired(now: now)
                idempotencyBytes.store(cache.byteCount, ordering: .relaxed)
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
                        bytes: ProtocolEncoding.frame(
                            name: "snapshot", sequence: since, data: ProtocolEncoding.page(snapshot)))
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

    /// Ends the session: every stream gets an `expired` event and closes; every page is released.
    func expire(reason: String) {
        let streams = streamState.withLock { state -> [EventStream] in
            state.expired = true
            let streams = Array(state.streams.values)
            state.streams = [:]
            return streams
        }
        let frame = ProtocolEncoding.frame(name: "expired", sequence: nil, data: ["reason": .string(reason)])
        for stream in streams {
            stream.send(bytes: frame)
            stream.close()
        }
        pages.releaseAll()
    }
}
