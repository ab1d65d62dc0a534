import MVVMR
import Synchronization

/// Collects a session's events from its sink, which may run on any thread.
final class EventLog: Sendable {
    private let events = Mutex<[SessionEvent]>([])

    func append(_ event: SessionEvent) {
        events.withLock { $0.append(event) }
    }

    func take() -> [SessionEvent] {
        events.withLock { events in
            defer { events.removeAll() }
            return events
        }
    }
}
