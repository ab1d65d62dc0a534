@testable import DemoPages
import JSONPatch
import MVVMR
import Synchronization
import Testing

/// A session's output handed to a receiver object (as a server's session takes it) rather than to closures: the
/// same records, events and topic events, only the kinds asked for, and the receiver held weakly.
@Suite struct SessionOutputReceiverTests {
    /// Keeps every call, in order.
    final class Receiver: SessionOutputReceiver {
        enum Call: Equatable {
            case record(InputRecord, [SessionEvent])
            case event(SessionEvent)
            case topic(TopicEvent)
        }

        let calls = Mutex<[Call]>([])

        func sessionRecorded(_ record: InputRecord, events: [SessionEvent]) {
            calls.withLock { $0.append(.record(record, events)) }
        }

        func sessionProduced(_ event: SessionEvent) { calls.withLock { $0.append(.event(event)) } }

        func sessionTopicChanged(_ event: TopicEvent) { calls.withLock { $0.append(.topic(event)) } }

        var records: [InputRecord] {
            calls.withLock { $0.compactMap { if case .record(let record, _) = $0 { record } else { nil } } }
        }
        var events: [SessionEvent] {
            calls.withLock { $0.compactMap { if case .event(let event) = $0 { event } else { nil } } }
        }
        var topicEvents: [TopicEvent] {
            calls.withLock { $0.compactMap { if case .topic(let event) = $0 { event } else { nil } } }
        }
    }

    private func makeSession() -> PageSession {
        PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
    }

    @Test func aRecordsReceiverGetsWhatARecorderClosureGetsAndNothingElse() throws {
        let session = makeSession()
        defer { session.releaseAll() }
        let receiver = Receiver()
        let closureRecords = Mutex<[InputRecord]>([])
        session.setReceiver(receiver, for: .records)
        session.setRecorder { record, _ in closureRecords.withLock { $0.append(record) } }
        let start = try session.start(at: .counters)
        let action = try session.perform("increment", value: 1, on: "counters")

        #expect(receiver.records.map(\.number) == [1, 2])
        #expect(receiver.records == closureRecords.withLock { $0 })
        #expect(receiver.calls.withLock { $0 }.first == .record(receiver.records[0], start.events))
        #expect(receiver.calls.withLock { $0 }.last == .record(receiver.records[1], action.events))
        #expect(receiver.events.isEmpty && receiver.topicEvents.isEmpty)
        #expect(session.receiverKinds == .records)
    }

    @Test func anEventsReceiverGetsEveryEventInOrderAndNoRecordIsMade() throws {
        let session = makeSession()
        defer { session.releaseAll() }
        let receiver = Receiver()
        session.setReceiver(receiver, for: .events)
        let start = try session.start(at: .counters)
        let action = try session.perform("increment", value: 1, on: "counters")

        #expect(receiver.events == start.events + action.events)
        #expect(receiver.events.map(\.sequence) == Array(1...receiver.events.count))
        #expect(receiver.records.isEmpty)
        // Nobody takes records: the session makes none, so an input still counts but nothing is recorded.
        #expect(session.inputNumber == 2)
    }

    @Test func aTopicsReceiverHearsTheTopicsAlreadyListenedToAndWhatThePagesPublish() throws {
        let session = makeSession()
        defer { session.releaseAll() }
        try session.start(at: .board)
        let receiver = Receiver()
        session.setReceiver(receiver, for: [.records, .topics])
        // Installed after the board bound: it is handed the topic the board listens to already.
        #expect(receiver.topicEvents == [.subscribed("board")])
        try session.perform("draft", value: "Hello", on: "board")
        try session.perform("post", on: "board")
        let published = receiver.topicEvents.compactMap { event -> (TopicMessage, Int)? in
            if case .published(let message, let input) = event { (message, input) } else { nil }
        }
        #expect(published.count == 1)
        #expect(published.first?.0.value["text"] == "Hello")
        #expect(published.first?.1 == receiver.records.last?.number)
        try session.start(at: .home)
        #expect(receiver.topicEvents.last == .unsubscribed("board"))
    }

    @Test func theReceiverIsHeldWeaklyAndOnceGoneTheSessionGoesOnWithoutIt() throws {
        let session = makeSession()
        defer { session.releaseAll() }
        weak var gone: Receiver?
        do {
            let receiver = Receiver()
            gone = receiver
            session.setReceiver(receiver, for: [.records, .events])
            try session.start(at: .counters)
            #expect(receiver.records.count == 1)
            #expect(session.receiverKinds == [.records, .events])
        }
        #expect(gone == nil)
        #expect(session.receiverKinds == [])
        let action = try session.perform("increment", value: 1, on: "counters")
        #expect(action.patch?.count == 1)
    }

    @Test func aReceiverSetAgainReplacesTheFirst() throws {
        let session = makeSession()
        defer { session.releaseAll() }
        let first = Receiver(), second = Receiver()
        session.setReceiver(first, for: .events)
        try session.start(at: .counters)
        session.setReceiver(second, for: .events)
        try session.perform("increment", value: 1, on: "counters")
        #expect(first.events.map(\.sequence) == [1])
        #expect(second.events.map(\.sequence) == [2])
        session.setReceiver(nil, for: .events)
        try session.perform("increment", value: 1, on: "counters")
        #expect(second.events.map(\.sequence) == [2])
    }
}
