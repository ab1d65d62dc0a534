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
final class SessionOutbox: Sendable {
    /// One thing to hand out.
    enum Entry: Sendable {
        /// An input's record, with the events it caused: for the recorder.
        case record(InputRecord, [SessionEvent])
        /// An event: for the event sink.
        case event(SessionEvent)
        /// A topic the session started or stopped listening to, or a value it published: for the topic listener.
        case topic(TopicEvent)
    }

    private struct State {
        var entries: [Entry] = []
        var isDelivering = false
        /// The thread handing entries out, while one is.
        var deliverer: pthread_t?
        var recorder: (@Sendable (InputRecord, [SessionEvent]) -> Void)?
        var eventSink: (@Sendable (SessionEvent) -> Void)?
        var topicListener: (@Sendable (TopicEvent) -> Void)?
    }

    /// What one delivery hands out, and to whom.
    private struct Delivery {
        let entries: [Entry]
        let recorder: (@Sendable (InputRecord, [SessionEvent]) -> Void)?
        let eventSink: (@Sendable (SessionEvent) -> Void)?
        let topicListener: (@Sendable (TopicEvent) -> Void)?
    }

    private let state = Locked(State())

    /// Sets who receives records (nil: nobody).
    func setRecorder(_ recorder: (@Sendable (InputRecord, [SessionEvent]) -> Void)?) {
        state.withLock { $0.recorder = recorder }
    }

    /// Sets who receives events (nil: nobody).
    func setEventSink(_ sink: (@Sendable (SessionEvent) -> Void)?) {
        state.withLock { $0.eventSink = sink }
    }

    /// Sets who receives topic events (nil: nobody).
    func setTopicListener(_ listener: (@Sendable (TopicEvent) -> Void)?) {
        state.withLock { $0.topicListener = listener }
    }

    /// Queues `entry`; called inside the session's lock, so entries queue in input order.
    func queue(_ entry: Entry) {
        state.withLock { $0.entries.append(entry) }
    }

    /// Hands out what is queued, unless another caller is doing so (it takes this caller's entries too). Called
    /// with the session's lock released.
    func deliver() {
        var delivery = state.withLock { state -> Delivery? in
            guard !state.isDelivering, !state.entries.isEmpty else { return nil }
            state.isDelivering = true
            state.deliverer = pthread_self()
            return Self.take(&state)
        }
        while let current = delivery {
            for entry in current.entries {
                switch entry {
                case .record(let record, let events): current.recorder?(record, events)
                case .event(let event): current.eventSink?(event)
                case .topic(let event): current.topicListener?(event)
                }
            }
            delivery = state.withLock { state -> Delivery? in
                guard !state.entries.isEmpty else {
                    state.isDelivering = false
                    state.deliverer = nil
                    return nil
                }
                return Self.take(&state)
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
            if state.withLock({ !$0.isDelivering && $0.entries.isEmpty }) { return }
            // Another caller is handing out a batch: it takes what is queued before it stops.
            sched_yield()
        }
    }

    private static func take(_ state: inout State) -> Delivery {
        defer { state.entries = [] }
        return Delivery(
            entries: state.entries, recorder: state.recorder, eventSink: state.eventSink,
            topicListener: state.topicListener)
    }
}
