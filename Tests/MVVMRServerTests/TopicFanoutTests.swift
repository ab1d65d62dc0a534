import JSONPatch
import Locking
import MVVMR
import Testing

@testable import MVVMRServer

/// A page that publishes what it is told to `say` on the `shouts` topic and lists what the topic brings.
struct ShoutInput {
    let say: Signal<String>
}

struct ShoutOutput {
    let heard: Driver<[String]>
    let said: Signal<String>
}

struct ShoutView: View {
    func input(from actions: Actions) -> ShoutInput { ShoutInput(say: actions.signal("say", of: String.self)) }

    func bind(_ output: ShoutOutput, to page: Page) {
        page.bind(output.heard, at: "/heard")
        page.publish(output.said, on: .shouts)
    }
}

final class ShoutViewModel: ViewModel {
    private let shouts: Signal<String>
    init(context: UnitContext) { shouts = context.messages(on: .shouts) }

    func transform(_ input: ShoutInput) -> ShoutOutput {
        ShoutOutput(heard: shouts.scan([String]()) { $0 + [$1] }.asDriver(startingWith: []), said: input.say)
    }
}

extension Topic where Value == String {
    static var shouts: Topic<String> { Topic("shouts") }
}

extension UnitCase {
    static let shout = UnitCase("shout", view: ShoutView.self, viewModel: ShoutViewModel.self)
}

@Suite struct TopicFanoutTests {
    static let registry = UnitRegistry(root: .shout, units: [.shout, .echo])

    /// Waits (sleeping, up to 5 s) until `condition` holds.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<500 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    static func heard(_ session: ServerSession) -> JSONValue? {
        session.pages.pages.first { $0.unit == "shout" }?.view["heard"]
    }

    @Test func theInProcessBusDeliversEveryMessageInOrderUntilUnsubscribed() async {
        let bus = InProcessTopicBus()
        let seen = Locked<[String]>([])
        let subscription = bus.subscribe(to: "t") { payload in
            seen.withLock { $0.append(String(decoding: payload, as: UTF8.self)) }
        }
        let other = bus.subscribe(to: "u") { _ in seen.withLock { $0.append("wrong topic") } }
        for number in 1...20 { bus.publish(Array("\(number)".utf8), on: "t") }
        #expect(await Self.eventually { seen.withLock { $0.count } == 20 })
        #expect(seen.withLock { $0 } == (1...20).map(String.init))
        bus.unsubscribe(subscription)
        bus.unsubscribe(subscription)
        bus.unsubscribe(other)
        bus.publish(Array("21".utf8), on: "t")
        let marker = Locked(false)
        _ = bus.subscribe(to: "end") { _ in marker.withLock { $0 = true } }
        bus.publish([], on: "end")
        #expect(await Self.eventually { marker.withLock { $0 } })
        #expect(seen.withLock { $0.count } == 20)
        #expect(bus.subscriberCount(of: "t") == 0)
    }

    @Test func aValueSaidInOneSessionReachesEveryListeningSessionItselfIncludedAndNoOther() async throws {
        let bus = InProcessTopicBus()
        let fanout = TopicFanout(bus: bus)
        let sessions = (0..<3).map { _ in
            ServerSession(identifier: SessionIdentifier.generate(), registry: Self.registry, services: Services())
        }
        defer { for session in sessions { session.expire(reason: nil) } }
        for session in sessions { session.joinTopics(fanout) }
        try sessions[0].pages.start()
        try sessions[1].pages.start()
        try sessions[2].pages.start(at: .echo)
        #expect(fanout.listenerCount(of: "shouts") == 2)
        #expect(bus.subscriberCount(of: "shouts") == 1)  // one bus subscription per node, not per session
        try sessions[1].pages.perform("say", value: "hello", on: "shout")
        #expect(await Self.eventually { Self.heard(sessions[0]) == ["hello"] && Self.heard(sessions[1]) == ["hello"] })
        #expect(sessions[2].pages.inputNumber == 1)
    }

    @Test func concurrentPostsReachEveryListeningSessionOnceEachInEachPublishersOrder() async throws {
        let bus = InProcessTopicBus()
        let fanout = TopicFanout(bus: bus)
        let sessions = (0..<4).map { _ in
            ServerSession(identifier: SessionIdentifier.generate(), registry: Self.registry, services: Services())
        }
        defer { for session in sessions { session.expire(reason: nil) } }
        for session in sessions {
            session.joinTopics(fanout)
            try session.pages.start()
        }
        await withTaskGroup(of: Void.self) { group in
            for (index, session) in sessions.enumerated() {
                group.addTask {
                    for number in 0..<25 {
                        _ = try? session.pages.perform("say", value: .string("\(index)-\(number)"), on: "shout")
                    }
                }
            }
        }
        #expect(await Self.eventually { sessions.allSatisfy { Self.heard($0)?.arrayValue?.count == 100 } })
        for session in sessions {
            let heard = (Self.heard(session)?.arrayValue ?? []).compactMap(\.stringValue)
            #expect(Set(heard).count == 100)
            for index in 0..<4 {
                #expect(heard.filter { $0.hasPrefix("\(index)-") } == (0..<25).map { "\(index)-\($0)" })
            }
        }
    }

    @Test func aReleasedSessionLeavesTheTopicAndTheLastOneEndsTheBusSubscription() throws {
        let bus = InProcessTopicBus()
        let fanout = TopicFanout(bus: bus)
        let first = ServerSession(
            identifier: SessionIdentifier.generate(), registry: Self.registry, services: Services())
        let second = ServerSession(
            identifier: SessionIdentifier.generate(), registry: Self.registry, services: Services())
        for session in [first, second] {
            session.joinTopics(fanout)
            try session.pages.start()
        }
        first.expire(reason: nil)
        #expect(fanout.listenerCount(of: "shouts") == 1)
        #expect(first.receive(TopicMessage(topic: "shouts", value: "late")) == false)
        try second.pages.start(at: .echo)  // a root navigation releases the shout page
        #expect(fanout.listenerCount(of: "shouts") == 0)
        #expect(bus.subscriberCount(of: "shouts") == 0)
        second.expire(reason: nil)
    }

    @Test func aValueGoesOutOnlyOnceTheInputThatSaidItIsStored() async throws {
        let bus = InProcessTopicBus()
        let fanout = TopicFanout(bus: bus)
        let store = HeldAppendsStore()
        let session = ServerSession(
            identifier: SessionIdentifier.generate(), registry: Self.registry, services: Services(), store: store)
        defer { session.expire(reason: nil) }
        session.joinTopics(fanout)
        let onBus = Locked<[String]>([])
        _ = bus.subscribe(to: "shouts") { payload in
            onBus.withLock { $0.append(String(decoding: payload, as: UTF8.self)) }
        }
        try session.pages.start()
        store.complete(1, with: .success(()))
        try session.pages.perform("say", value: "wait for it", on: "shout")
        try await Task.sleep(for: .milliseconds(100))
        #expect(onBus.withLock { $0 }.isEmpty)
        store.complete(2, with: .success(()))
        #expect(await Self.eventually { onBus.withLock { $0 } == [#""wait for it""#] })
        // The session hears itself: its record 3 is the message (its clients see it once that is stored).
        #expect(await Self.eventually { session.pages.inputNumber == 3 })
        store.complete(3, with: .success(()))
        #expect(Self.heard(session) == ["wait for it"])
    }

    @Test func aValueSaidByAnInputTheStoreLostNeverGoesOut() async throws {
        let bus = InProcessTopicBus()
        let fanout = TopicFanout(bus: bus)
        let store = HeldAppendsStore()
        let session = ServerSession(
            identifier: SessionIdentifier.generate(), registry: Self.registry, services: Services(), store: store)
        defer { session.expire(reason: nil) }
        session.joinTopics(fanout)
        let onBus = Locked(0)
        _ = bus.subscribe(to: "shouts") { _ in onBus.withLock { $0 += 1 } }
        try session.pages.start()
        store.complete(1, with: .success(()))
        try session.pages.perform("say", value: "lost", on: "shout")
        store.complete(2, with: .failure(SessionStoreError(.unavailable, "the disk is full")))
        bus.publish(Array(#""marker""#.utf8), on: "shouts")
        #expect(await Self.eventually { onBus.withLock { $0 } == 1 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(onBus.withLock { $0 } == 1)
    }
}

@Suite struct ServerPublishTests {
    @Test func aServiceMayPublishThroughTheServerOnItsBus() async throws {
        let bus = InProcessTopicBus()
        let server = PageServer(units: [.shout], root: .shout, topicBus: bus)
        let onBus = Locked<[String]>([])
        _ = bus.subscribe(to: "shouts") { payload in
            onBus.withLock { $0.append(String(decoding: payload, as: UTF8.self)) }
        }
        try server.publish("from a service", on: .shouts)
        #expect(await TopicFanoutTests.eventually { onBus.withLock { $0 } == [#""from a service""#] })
    }
}

@Suite struct TopicLimitsTests {
    @Test func aPayloadThatIsNotJSONOrTooLargeIsDroppedAndTheNextOneArrives() async throws {
        let bus = InProcessTopicBus()
        let fanout = TopicFanout(bus: bus)
        let session = ServerSession(
            identifier: SessionIdentifier.generate(), registry: TopicFanoutTests.registry, services: Services())
        defer { session.expire(reason: nil) }
        session.joinTopics(fanout)
        try session.pages.start()
        bus.publish(Array("not json".utf8), on: "shouts")
        bus.publish(
            Array(("\"" + String(repeating: "x", count: TopicFanout.maxPayloadBytes) + "\"").utf8), on: "shouts")
        bus.publish(Array(#""fine""#.utf8), on: "shouts")
        #expect(await TopicFanoutTests.eventually { TopicFanoutTests.heard(session) == ["fine"] })
        #expect(session.pages.inputNumber == 2)
    }
}
