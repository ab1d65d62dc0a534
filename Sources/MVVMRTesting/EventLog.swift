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

/// Collects the values a session's pages publish, from its topic listener.
final class PublicationLog: Sendable {
    private let messages = Mutex<[TopicMessage]>([])

    func append(_ message: TopicMessage) {
        messages.withLock { $0.append(message) }
    }

    /// Takes the messages on `topic`, leaving the others.
    func take(topic: String) -> [TopicMessage] {
        messages.withLock { messages in
            let taken = messages.filter { $0.topic == topic }
            messages.removeAll { $0.topic == topic }
            return taken
        }
    }

    func takeAll() -> [TopicMessage] {
        messages.withLock { messages in
            defer { messages.removeAll() }
            return messages
        }
    }
}
