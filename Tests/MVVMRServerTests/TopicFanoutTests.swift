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
    func input(from actions: Actions<NamedAction>) -> ShoutInput { ShoutInput(say: actions.signal("say", of: String.self)) }

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

    /// A session on the shout page, listening through a fan-out of its own on `bus`.
    static func listeningSession(on bus: InProcessTopicBus) throws -> ServerSession {
        let session = ServerSession(
            identifier: SessionIdentifier.generate(), registry: registry, services: Services(),
            topicFanout: TopicFanout(bus: bus))
        session.joinTopics()
        try session.pages.start()
        return session
    }

    static func heard(_ session: ServerSession) -> JSONValue? {
        session.pages.pages.first { $0.unit == "shout" }?.view["heard"]
    }

    /// The value a bus payload carries, as JSON text ("" for a payload not of the fan-out's format).
    static func valueText(_ payload: [UInt8]) -> String {
        TopicFanout.message(from: payload, on: "shouts")?.value.jsonString ?? ""
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
            ServerSession(
                identifier: SessionIdentifier.generate(), registry: Self.registry, services: Services(), topicFanout: fanout)
        }
        defer { for session in sessions { session.expire(reason: nil) } }
        for session in sessions { session.joinTopics() }
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
            ServerSession(
                identifier: SessionIdentifier.generate(), registry: Self.registry, services: Services(), topicFanout: fanout)
        }
        defer { for session in sessions { session.expire(reason: nil) } }
        for session in sessions {
            session.joinTopics()
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
            identifier: SessionIdentifier.generate(), registry: Self.registry, services: Services(), topicFanout: fanout)
        let second = ServerSession(
            identifier: SessionIdentifier.generate(), registry: Self.registry, services: Services(), topicFanout: fanout)
        for session in [first, second] {
            session.joinTopics()
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

    /// A session on the shout page whose appends wait for the test, its start stored, and every value the bus
    /// carries on `shouts` as JSON text.
    private static func heldSession() throws -> (InProcessTopicBus, HeldAppendsStore, ServerSession, Locked<[String]>) {
        let bus = InProcessTopicBus()
        let store = HeldAppendsStore()
        let session = ServerSession(
            identifier: SessionIdentifier.generate(), registry: registry, services: Services(), store: store,
            topicFanout: TopicFanout(bus: bus))
        session.joinTopics()
        let onBus = Locked<[String]>([])
        _ = bus.subscribe(to: "shouts") { payload in onBus.withLock { $0.append(valueText(payload)) } }
        try session.pages.start()
        store.complete(1, with: .success(()))
        return (bus, store, session, onBus)
    }

    @Test func aValueGoesOutOnlyOnceTheInputThatSaidItIsStored() async throws {
        let (_, store, session, onBus) = try Self.heldSession()
        defer { session.expire(reason: nil) }
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
        let (bus, store, session, onBus) = try Self.heldSession()
        defer { session.expire(reason: nil) }
        try session.pages.perform("say", value: "lost", on: "shout")
        store.complete(2, with: .failure(SessionStoreError(.unavailable, "the disk is full")))
        bus.publish(TopicFanout.payload(of: "marker", id: "m1"), on: "shouts")
        #expect(await Self.eventually { onBus.withLock { $0.count } == 1 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(onBus.withLock { $0.count } == 1)
    }
}

@Suite struct ServerPublishTests {
    @Test func aServiceMayPublishThroughTheServerOnItsBus() async throws {
        let bus = InProcessTopicBus()
        let server = PageServer(units: [.shout], root: .shout, topicBus: bus)
        let onBus = Locked<[String]>([])
        _ = bus.subscribe(to: "shouts") { payload in
            onBus.withLock { $0.append(TopicFanoutTests.valueText(payload)) }
        }
        try server.publish("from a service", on: .shouts)
        #expect(await TopicFanoutTests.eventually { onBus.withLock { $0 } == [#""from a service""#] })
    }
}

@Suite struct TopicLimitsTests {
    @Test func aPayloadThatIsNotJSONOrTooLargeIsDroppedAndTheNextOneArrives() async throws {
        let bus = InProcessTopicBus()
        let session = try TopicFanoutTests.listeningSession(on: bus)
        defer { session.expire(reason: nil) }
        bus.publish(Array("not json".utf8), on: "shouts")
        bus.publish(TopicFanout.payload(of: .string(String(repeating: "x", count: TopicFanout.maxPayloadBytes)), id: "big"), on: "shouts")
        // A bare value (a node of an earlier version, another publisher) is a message without an id.
        bus.publish(Array(#""bare""#.utf8), on: "shouts")
        bus.publish(TopicFanout.payload(of: "fine", id: "f1"), on: "shouts")
        #expect(await TopicFanoutTests.eventually { TopicFanoutTests.heard(session) == ["bare", "fine"] })
        #expect(session.pages.inputNumber == 3)
    }
}

/// A session that comes back (restored on this node after it was away: passivated, or its node died) takes the
/// messages this node kept that came after the last one its log holds, each once, before any live one.
@Suite struct TopicCatchUpTests {
    /// A node on a shared store and bus, and a session of it on the shout page.
    private static func node(store: MemorySessionStore, bus: InProcessTopicBus) -> PageServer {
        PageServer(units: [.shout], root: .shout, store: store, topicBus: bus)
    }

    private static func openSession(on server: PageServer) throws -> ServerSession {
        let session = ServerSession(
            identifier: SessionIdentifier.generate(), environment: server.sessionEnvironment)
        session.joinTopics()
        try session.pages.start()
        return session
    }

    private static func heard(_ session: ServerSession) -> [String] {
        (TopicFanoutTests.heard(session)?.arrayValue ?? []).compactMap(\.stringValue)
    }

    /// Two nodes on one store and bus, with a session on the second that keeps it subscribed to the topic (and
    /// so keeping its recent messages).
    private struct TwoNodes {
        let store = MemorySessionStore()
        let first: PageServer
        let second: PageServer
        let watcher: ServerSession

        init() throws {
            let bus = InProcessTopicBus()
            first = TopicCatchUpTests.node(store: store, bus: bus)
            second = TopicCatchUpTests.node(store: store, bus: bus)
            watcher = try TopicCatchUpTests.openSession(on: second)
        }
    }

    @Test func aSessionRestoredOnAnotherNodeTakesWhatItMissedOnceEachThenLiveOnes() async throws {
        let nodes = try TwoNodes()
        let (store, first, second, watcher) = (nodes.store, nodes.first, nodes.second, nodes.watcher)
        defer { watcher.expire(reason: nil) }
        let away = try Self.openSession(on: first)
        try first.publish("one", on: .shouts)
        #expect(await TopicFanoutTests.eventually { Self.heard(away) == ["one"] && Self.heard(watcher) == ["one"] })
        // Its node dies: its copy is gone, its log (with "one") is in the store.
        away.expire(reason: nil)
        try second.publish("two", on: .shouts)
        try second.publish("three", on: .shouts)
        #expect(await TopicFanoutTests.eventually { Self.heard(watcher) == ["one", "two", "three"] })

        let restored = try #require(try second.liveSession(away.identifier))
        #expect(Self.heard(restored) == ["one", "two", "three"], "what it missed, in order, before it was live")
        try second.publish("four", on: .shouts)
        #expect(await TopicFanoutTests.eventually { Self.heard(restored) == ["one", "two", "three", "four"] })
        // Each message is an input of its log, once: restored again, it shows the same.
        let records = try #require(try store.load(away.identifier)).records
        #expect(records.count == 5, "its start and four messages")
        second.dropCopyTakenOver(away.identifier)
        let again = try #require(try second.liveSession(away.identifier))
        #expect(Self.heard(again) == ["one", "two", "three", "four"])
    }

    @Test func aMessageThatArrivesTwiceIsTakenOnce() async throws {
        let bus = InProcessTopicBus()
        let session = try TopicFanoutTests.listeningSession(on: bus)
        defer { session.expire(reason: nil) }
        for text in ["a", "b", "a", "c", "b"] { bus.publish(TopicFanout.payload(of: .string(text), id: "id-\(text)"), on: "shouts") }
        #expect(await TopicFanoutTests.eventually { Self.heard(session) == ["a", "b", "c"] })
        try await Task.sleep(for: .milliseconds(50))
        #expect(Self.heard(session) == ["a", "b", "c"])
        #expect(session.pages.inputNumber == 4)
    }

    @Test func aRestoredSessionWithNoMessageTheNodeKeptTakesThoseThatCameAfterItsLastRecord() async throws {
        let nodes = try TwoNodes()
        let (first, second, watcher) = (nodes.first, nodes.second, nodes.watcher)
        defer { watcher.expire(reason: nil) }
        try second.publish("before it began", on: .shouts)
        #expect(await TopicFanoutTests.eventually { Self.heard(watcher) == ["before it began"] })
        // A session that took no message: its log is its start, made after the first message came.
        let quiet = try Self.openSession(on: first)
        quiet.expire(reason: nil)
        try await Task.sleep(for: .milliseconds(5))
        try second.publish("while it was away", on: .shouts)
        #expect(await TopicFanoutTests.eventually { Self.heard(watcher).count == 2 })
        let restored = try #require(try second.liveSession(quiet.identifier))
        #expect(Self.heard(restored) == ["while it was away"], "what came after its start, not what came before")
        try second.publish("live", on: .shouts)
        #expect(await TopicFanoutTests.eventually { Self.heard(restored) == ["while it was away", "live"] })
    }

    @Test func aSessionRestoredWhereTheTopicWasNotFollowedTakesOnlyLiveOnes() async throws {
        let store = MemorySessionStore()
        let bus = InProcessTopicBus()
        let first = Self.node(store: store, bus: bus)
        let away = try Self.openSession(on: first)
        try first.publish("one", on: .shouts)
        #expect(await TopicFanoutTests.eventually { Self.heard(away) == ["one"] })
        away.expire(reason: nil)
        // A node that subscribes only now cannot know of what was said before: the session goes on from here.
        let second = Self.node(store: store, bus: bus)
        let restored = try #require(try second.liveSession(away.identifier))
        #expect(Self.heard(restored) == ["one"])
        try second.publish("three", on: .shouts)
        #expect(await TopicFanoutTests.eventually { Self.heard(restored) == ["one", "three"] })
    }

    @Test func aPayloadOfAnotherShapeIsAValueWithoutAnIdTakenEachTime() throws {
        for payload in [#""bare""#, #"{"id":"a b","value":"an id that is not one"}"#, #"{"id":"x1","value":"v","more":1}"#] {
            let message = try #require(TopicFanout.message(from: Array(payload.utf8), on: "shouts"))
            #expect(message.id == nil)
            #expect(message.value == (try JSONValue(parsing: payload)))
        }
        #expect(TopicFanout.message(from: Array("not json".utf8), on: "shouts") == nil)
        let session = ServerSession(
            identifier: SessionIdentifier.generate(), registry: TopicFanoutTests.registry, services: Services())
        defer { session.expire(reason: nil) }
        try session.pages.start()
        for _ in 0..<2 { #expect(session.receive(TopicMessage(topic: "shouts", value: "same"))) }
        #expect(Self.heard(session) == ["same", "same"], "without an id, nothing tells a message from a repeat")
    }

    @Test func aNodeKeepsAtMostItsByteLimitOfATopicsRecentMessages() async throws {
        let bus = InProcessTopicBus()
        let session = try TopicFanoutTests.listeningSession(on: bus)
        defer { session.expire(reason: nil) }
        // A second listener on the same fan-out reads what it keeps: 64 messages of 8 KiB are 512 KiB.
        let fanout = TopicFanout(bus: bus)
        let probe = ServerSession(identifier: SessionIdentifier.generate(), registry: TopicFanoutTests.registry, services: Services())
        defer { probe.expire(reason: nil) }
        fanout.add(probe, to: "shouts")
        let text = String(repeating: "x", count: 8_192)
        for number in 0..<64 { bus.publish(TopicFanout.payload(of: .string(text), id: "m\(number)"), on: "shouts") }
        #expect(await TopicFanoutTests.eventually { (Self.heard(session).count) == 64 })
        let kept = fanout.add(probe, to: "shouts")
        #expect(kept.reduce(0) { $0 + $1.bytes } <= TopicFanout.recentByteLimit)
        #expect(kept.count >= 31 && kept.last?.message.id == "m63", "the newest are kept: \(kept.count)")
    }

    @Test func publishedMessagesCarryAnIdOfSixteenHexadecimalDigits() async throws {
        let bus = InProcessTopicBus()
        let fanout = TopicFanout(bus: bus)
        let payloads = Locked<[[UInt8]]>([])
        _ = bus.subscribe(to: "shouts") { payload in payloads.withLock { $0.append(payload) } }
        fanout.publish(TopicMessage(topic: "shouts", value: "x"))
        fanout.publish(TopicMessage(topic: "shouts", value: "x"))
        #expect(await TopicFanoutTests.eventually { payloads.withLock { $0.count } == 2 })
        let messages = payloads.withLock { $0 }.compactMap { TopicFanout.message(from: $0, on: "shouts") }
        #expect(messages.count == 2)
        #expect(messages.allSatisfy { $0.value == "x" && $0.id?.count == 16 && $0.id?.allSatisfy(\.isHexDigit) == true })
        #expect(messages[0].id != messages[1].id)
    }
}

/// Topic messages that change a page count towards its record cap (`MAX_PAGE_RECORDS`), as actions do, live and on
/// restore alike: a page without a saved state on a busy topic would otherwise grow its log for ever (compaction
/// cannot write it down, and the cap would never bind it fresh).
@Suite struct TopicRecordCapTests {
    @Test func messagesThatChangeAPageCountTowardsItsCapLiveAndOnRestore() throws {
        let store = MemorySessionStore()
        let session = ServerSession(
            identifier: SessionIdentifier.generate(), registry: TopicFanoutTests.registry, services: Services(),
            store: store)
        defer { session.expire(reason: nil) }
        try session.pages.start()
        for number in 1...3 {
            #expect(session.receive(TopicMessage(topic: "shouts", value: .string("m\(number)"), id: "id\(number)")))
        }
        // Live: past a cap of 2 the page is written down as bound fresh; under a cap of 5 it cannot be written down.
        #expect(session.pages.takeSnapshot(recordCap: 2) != nil)
        #expect(session.pages.takeSnapshot(recordCap: 5) == nil)

        session.waitUntilStored(session.pages.inputNumber)
        let stored = try #require(try store.load(session.identifier))
        let records = try stored.records.map { try InputRecord(json: try JSONValue(parsing: $0.body)) }
        #expect(records.count == 4)
        for (cap, capped) in [(2, ["shout"]), (5, [])] {
            let restored = PageSession(registry: TopicFanoutTests.registry, services: Services(), clock: .virtual)
            defer { restored.releaseAll() }
            let report = restored.restore(from: records, recordCap: cap)
            #expect(report.cappedUnits == capped, "cap \(cap)")
            // A capped page is reported diverged (the server binds it fresh); one under the cap is replayed whole.
            #expect(report.divergedUnits == capped, "cap \(cap)")
            if capped.isEmpty { #expect(restored.pages.first { $0.unit == "shout" }?.view["heard"] == ["m1", "m2", "m3"]) }
        }
    }
}
