import Locking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What a session's inputs produced for the world outside the session (input records for the recorder, events
/// for the event sink), queued in input order inside the session's lock and handed out after it is released.
///
/// So only the step itself runs under the session's lock: encoding a record, appending it to a store, framing
/// events and sending them to streams run outside, in input order, on the thread of whichever caller is
/// delivering. Each caller delivers after it released the lock; one delivers at a time, taking whatever others
/// queued meanwhile, so nothing is handed out twice or out of order.
///
/// Entries go to a ``SessionOutputReceiver`` (held weakly: a server's session receives from its own pages) and to
/// closures set one by one (tests, tools). A value holding one reference: the session core and its `PageSession`
/// share the lock it holds, and an idle session pays for the lock and its few fields only.
struct SessionOutbox: Sendable {
    /// One thing to hand out.
    enum Entry: Sendable {
        /// An input's record, with the events it caused: for the recorder. Boxed: the entry is copied into the queue
        /// and out of it, and each copy of a record retains and releases every field of it, where a box's copy is one
        /// retain (about 1,000 instructions fewer per action on the SQLite store).
        case record(RecordedInput)
        /// An event: for the event sink.
        case event(SessionEvent)
        /// A topic the session started or stopped listening to, or a value it published: for the topic listener.
        case topic(TopicEvent)
    }

    /// An input's record and the events it caused, shared by the copies of its entry.
    final class RecordedInput: Sendable {
        let record: InputRecord
        let events: [SessionEvent]

        init(_ record: InputRecord, _ events: [SessionEvent]) {
            self.record = record
            self.events = events
        }
    }

    /// The receivers set as closures, made by the first one set: a server's sessions use a receiver object and
    /// never pay for these.
    private final class Closures: Sendable {
        let recorder: (@Sendable (InputRecord, [SessionEvent]) -> Void)?
        let eventSink: (@Sendable (SessionEvent) -> Void)?
        let topicListener: (@Sendable (TopicEvent) -> Void)?

        init(
            recorder: (@Sendable (InputRecord, [SessionEvent]) -> Void)?, eventSink: (@Sendable (SessionEvent) -> Void)?,
            topicListener: (@Sendable (TopicEvent) -> Void)?
        ) {
            self.recorder = recorder
            self.eventSink = eventSink
            self.topicListener = topicListener
        }

        /// The kinds a closure is set for.
        var kinds: SessionOutputKinds {
            var kinds: SessionOutputKinds = []
            if recorder != nil { kinds.insert(.records) }
            if eventSink != nil { kinds.insert(.events) }
            if topicListener != nil { kinds.insert(.topics) }
            return kinds
        }
    }

    /// A weak reference to the receiver, with the kinds it takes.
    private struct WeakReceiver {
        weak var receiver: (any SessionOutputReceiver)?
        var kinds: SessionOutputKinds
    }

    private struct State {
        var entries: [Entry] = []
        var closures: Closures?
        var receiver = WeakReceiver(receiver: nil, kinds: [])
        /// The thread handing entries out, while one is (nil: nobody is delivering).
        var deliverer: pthread_t?

        /// What the receiver object takes: nothing once it is gone.
        var receiverKinds: SessionOutputKinds { receiver.receiver == nil ? [] : receiver.kinds }

        /// Replaces the closures with those `change` leaves (none at all: no object).
        mutating func changeClosures(
            _ change: (
                inout (@Sendable (InputRecord, [SessionEvent]) -> Void)?, inout (@Sendable (SessionEvent) -> Void)?,
                inout (@Sendable (TopicEvent) -> Void)?
            ) -> Void
        ) {
            var (recorder, eventSink, topicListener) = (closures?.recorder, closures?.eventSink, closures?.topicListener)
            change(&recorder, &eventSink, &topicListener)
            closures =
                recorder == nil && eventSink == nil && topicListener == nil
                ? nil : Closures(recorder: recorder, eventSink: eventSink, topicListener: topicListener)
        }
    }

    /// What one delivery hands out, and to whom.
    private struct Delivery {
        let entries: [Entry]
        let closures: Closures?
        let receiver: (any SessionOutputReceiver)?
        let kinds: SessionOutputKinds
    }

    private let state = Locked(State())

    /// Sets who receives records (nil: nobody).
    func setRecorder(_ newRecorder: (@Sendable (InputRecord, [SessionEvent]) -> Void)?) {
        state.withLock { $0.changeClosures { recorder, _, _ in recorder = newRecorder } }
    }

    /// Sets who receives events (nil: nobody).
    func setEventSink(_ newSink: (@Sendable (SessionEvent) -> Void)?) {
        state.withLock { $0.changeClosures { _, sink, _ in sink = newSink } }
    }

    /// Sets who receives topic events (nil: nobody).
    func setTopicListener(_ newListener: (@Sendable (TopicEvent) -> Void)?) {
        state.withLock { $0.changeClosures { _, _, listener in listener = newListener } }
    }

    /// Sets the receiver object (held weakly) and what it takes, in place of any set before.
    func setReceiver(_ receiver: (any SessionOutputReceiver)?, for kinds: SessionOutputKinds) {
        state.withLock { $0.receiver = WeakReceiver(receiver: receiver, kinds: receiver == nil ? [] : kinds) }
    }

    /// What the receiver object takes (empty when none is set, or it is gone).
    var receiverKinds: SessionOutputKinds {
        state.withLock { $0.receiverKinds }
    }

    /// The kinds somebody receives: a closure, or the receiver object.
    var receivedKinds: SessionOutputKinds {
        state.withLock { state in state.receiverKinds.union(state.closures?.kinds ?? []) }
    }

    /// Queues `entry`; called inside the session's lock, so entries queue in input order.
    func queue(_ entry: Entry) {
        state.withLock { $0.entries.append(entry) }
    }

    /// Hands out what is queued, unless another caller is doing so (it takes this caller's entries too). Called
    /// with the session's lock released.
    func deliver() {
        var delivery = state.withLock { state -> Delivery? in
            guard state.deliverer == nil, !state.entries.isEmpty else { return nil }
            state.deliverer = pthread_self()
            return Self.take(&state)
        }
        while let current = delivery {
            Self.hand(current)
            delivery = state.withLock { state -> Delivery? in
                guard !state.entries.isEmpty else {
                    state.deliverer = nil
                    return nil
                }
                return Self.take(&state)
            }
        }
    }

    private static func hand(_ delivery: Delivery) {
        let closures = delivery.closures
        let receiver = delivery.receiver
        let kinds = delivery.kinds
        for entry in delivery.entries {
            switch entry {
            case .record(let recorded):
                closures?.recorder?(recorded.record, recorded.events)
                if kinds.contains(.records) { receiver?.sessionRecorded(recorded.record, events: recorded.events) }
            case .event(let event):
                closures?.eventSink?(event)
                if kinds.contains(.events) { receiver?.sessionProduced(event) }
            case .topic(let event):
                closures?.topicListener?(event)
                if kinds.contains(.topics) { receiver?.sessionTopicChanged(event) }
            }
        }
    }

    /// Returns once everything queued before the call has been handed out (delivering it when nobody is). Called
    /// by a recorder or an event sink while it is being handed something, it returns at once: it cannot wait for
    /// itself (what it was handed before is out; what is queued behind it follows when it returns).
    func waitUntilDelivered() {
        let isDeliverer = state.withLock { state in
            state.deliverer.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        }
        if isDeliverer { return }
        while true {
            deliver()
            if state.withLock({ $0.deliverer == nil && $0.entries.isEmpty }) { return }
            // Another caller is handing out a batch: it takes what is queued before it stops.
            sched_yield()
        }
    }

    private static func take(_ state: inout State) -> Delivery {
        defer { state.entries = [] }
        return Delivery(
            entries: state.entries, closures: state.closures, receiver: state.receiver.receiver,
            kinds: state.receiver.kinds)
    }
}
