import JSONPatch
import Locking
import MVVMR
import MicroHTTP
import Synchronization

/// One client's session as the server holds it: its pages (an `MVVMR.PageSession`), its event log for
/// `Last-Event-ID` replay, its open event streams and its idempotency cache.
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
    }

    let identifier: String
    let pages: PageSession
    let streamState: Locked<StreamState>
    /// Made on the first `Idempotency-Key`: most sessions never send one, and an idle session should cost
    /// as little as possible.
    private let idempotencyStorage = AtomicLazyReference<Locked<IdempotencyCache>>()

    /// The session's idempotency cache, behind its own lock.
    var idempotency: Locked<IdempotencyCache> {
        idempotencyStorage.load() ?? idempotencyStorage.storeIfNil(Locked(IdempotencyCache()))
    }

    init(identifier: String, registry: UnitRegistry, services: Services, eventLogSize: Int) {
        self.identifier = identifier
        let streamState = Locked(StreamState(log: EventLog(capacity: eventLogSize)))
        self.streamState = streamState
        pages = PageSession(registry: registry, services: services) { event in
            // Runs inside the page session's lock, in sequence order. Framed only when a stream takes it.
            streamState.withLock { state in
                state.lastSequence = event.sequence
                if state.streams.isEmpty {
                    state.log.append(event)
                } else {
                    let frame = ProtocolEncoding.frame(event)
                    state.log.append(sequence: event.sequence, frame: frame)
                    for stream in state.streams.values { stream.send(bytes: frame) }
                }
            }
        }
    }

    /// The number of open event streams.
    var openStreamCount: Int { streamState.withLock { $0.streams.count } }

    /// Attaches an event stream: replays the events after `lastEventID` from the log, or, when the log no
    /// longer reaches that far (or the id is ahead of the session), sends a snapshot of every live page;
    /// then streams every new event. Returns `false` when the session has ended.
    func attach(_ stream: EventStream, lastEventID: Int?) -> Bool {
        enum Attachment {
            case attached
            case expired
            case needsSnapshots(since: Int)
        }
        let attachment = streamState.withLock { state -> Attachment in
            if state.expired { return .expired }
            if let lastEventID {
                if lastEventID > state.lastSequence { return .needsSnapshots(since: state.lastSequence) }
                guard let frames = state.log.frames(after: lastEventID) else {
                    return .needsSnapshots(since: state.lastSequence)
                }
                for frame in frames { stream.send(bytes: frame) }
            }
            state.streams[ObjectIdentifier(stream)] = stream
            return .attached
        }
        switch attachment {
        case .attached:
            return true
        case .expired:
            return false
        case .needsSnapshots(let since):
            // Read the pages outside `streams` (lock order), then send them, then whatever happened
            // since `since` from the log, and go live: events both in the snapshots and replayed are
            // harmless, since a client ignores a patch whose rev is not newer than its own.
            let snapshots = pages.pages
            return streamState.withLock { state in
                if state.expired { return false }
                for snapshot in snapshots {
                    stream.send(bytes: ProtocolEncoding.frame(name: "snapshot", sequence: since, data: ProtocolEncoding.page(snapshot)))
                }
                for frame in state.log.frames(after: since) ?? [] { stream.send(bytes: frame) }
                state.streams[ObjectIdentifier(stream)] = stream
                return true
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
