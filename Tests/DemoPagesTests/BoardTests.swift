@testable import DemoPages
import JSONPatch
import MVVMR
import MVVMRTesting
import Synchronization
import Testing

@Suite struct BoardTests {
    @Test func startsEmptyWithANameFromTheSessionsRandomSource() throws {
        let tester = try PageTester(.board, services: demoServices())
        let author = try #require(tester.view["author"]?.stringValue)
        #expect(author.hasPrefix("guest-") && author.count == 10)
        #expect(tester.view == ["author": .string(author), "draft": "", "messages": [], "count": 0])
        #expect(
            tester.actions == [
                ActionDescriptor(name: "draft", valueType: .string), ActionDescriptor(name: "post", valueType: .none),
            ])
        // The same session seed gives the same name: a replay shows who posted.
        #expect(try PageTester(.board, services: demoServices()).view["author"]?.stringValue == author)
    }

    @Test func postPublishesTheDraftClearsItAndTheMessageComesBackThroughTheTopic() throws {
        let tester = try PageTester(.board, services: demoServices())
        let author = try #require(tester.view["author"]?.stringValue)
        tester.send(BoardAction.draft, "  Hello board  ") { $0[at: "/draft"] = "  Hello board  " }
        tester.send(BoardAction.post) { $0[at: "/draft"] = "" }
        let posts = tester.published(on: .board)
        #expect(posts == [BoardPost(author: author, text: "Hello board")])
        // Nothing shows until the topic brings it back (as it brings every subscriber's).
        for post in posts {
            tester.receive(post, on: .board) { view in
                view[at: "/messages"] = [["id": 1, "author": .string(author), "text": "Hello board"]]
                view[at: "/count"] = 1
            }
        }
        tester.receive(BoardPost(author: "guest-0001", text: "Hi"), on: .board) { view in
            view[at: "/messages/-"] = ["id": 2, "author": "guest-0001", "text": "Hi"]
            view[at: "/count"] = 2
        }
    }

    @Test func anEmptyOrBlankDraftPostsNothing() throws {
        let tester = try PageTester(.board, services: demoServices())
        tester.send(BoardAction.post)
        tester.send(BoardAction.draft, " \n\t ") { $0[at: "/draft"] = " \n\t " }
        tester.send(BoardAction.post)
        #expect(tester.published(on: .board).isEmpty)
    }

    @Test func aTooLongDraftOrAPostWithAValueIsRefusedAndChangesNothing() throws {
        let tester = try PageTester(.board, services: demoServices())
        let longest = String(repeating: "é", count: BoardState.maxLength)
        tester.send(BoardAction.draft, .string(longest)) { $0[at: "/draft"] = .string(longest) }
        for (action, value) in [("draft", JSONValue.string(longest + "x")), ("post", "now"), ("draft", 5)] {
            #expect(throws: PageError.self) {
                try tester.session.perform(action, value: value, on: "board", clientRevision: tester.rev)
            }
            do {
                try tester.session.perform(action, value: value, on: "board")
            } catch {
                #expect(error.code == .invalidValue)
            }
        }
        #expect(tester.session.pages.first?.view == tester.view)
        #expect(tester.published(on: .board).isEmpty)
    }

    @Test func keepsTheLatestFiftyMessagesNewestLast() throws {
        let tester = try PageTester(.board, services: demoServices())
        for number in 1...51 {
            tester.receive(BoardPost(author: "guest-beef", text: "#\(number)"), on: .board) { view in
                var messages = view["messages"]?.arrayValue ?? []
                messages.append(["id": .int(number), "author": "guest-beef", "text": .string("#\(number)")])
                if messages.count > 50 { messages.removeFirst() }
                view[at: "/messages"] = .array(messages)
                view[at: "/count"] = .int(messages.count)
            }
        }
        #expect(tester.view["messages"]?[0]?["id"] == 2)
        #expect(tester.view["count"] == 50)
    }

    @Test func aMessageOfAnotherShapeIsAnInputThatChangesNothing() throws {
        let tester = try PageTester(.board, services: demoServices())
        #expect(tester.session.receive(TopicMessage(topic: "board", value: ["text": 3])) != nil)
        #expect(tester.session.pages.first?.view == tester.view)
        // A topic no page listens to is no input at all.
        let before = tester.session.inputNumber
        #expect(tester.session.receive(TopicMessage(topic: "other", value: ["text": "x"])) == nil)
        #expect(tester.session.inputNumber == before)
    }
}

/// Two sessions and a bus made of plain calls: what a server does with the topic listener, without one.
@Suite struct BoardSessionTests {
    /// A session recording its log and what it publishes and listens to.
    final class Node: Sendable {
        let session: PageSession
        let records = Mutex<[InputRecord]>([])
        let published = Mutex<[TopicMessage]>([])
        let listening = Mutex<Set<String>>([])

        init() {
            session = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
            session.setRecorder { [weak self] record, _ in self?.records.withLock { $0.append(record) } }
            session.setTopicListener { [weak self] event in
                guard let self else { return }
                switch event {
                case .published(let message, _): self.published.withLock { $0.append(message) }
                case .subscribed(let topic): _ = self.listening.withLock { $0.insert(topic) }
                case .unsubscribed(let topic): _ = self.listening.withLock { $0.remove(topic) }
                }
            }
        }

        func takePublished() -> [TopicMessage] {
            published.withLock { messages in
                let taken = messages
                messages = []
                return taken
            }
        }
        var log: [InputRecord] { records.withLock { $0 } }
        var board: JSONValue? { session.pages.first { $0.unit == "board" }?.view }
    }

    /// Hands every message published by any node to every node listening to its topic, as a bus does.
    static func deliverAll(_ nodes: [Node]) {
        var pending = nodes.flatMap { $0.takePublished() }
        while !pending.isEmpty {
            let message = pending.removeFirst()
            for node in nodes where node.listening.withLock({ $0.contains(message.topic) }) {
                node.session.receive(message)
            }
            pending += nodes.flatMap { $0.takePublished() }
        }
    }

    @Test func aPostReachesEverySubscribedSessionAsARecordedInputAndOnlyThose() throws {
        let first = Node(), second = Node(), elsewhere = Node()
        defer { for node in [first, second, elsewhere] { node.session.releaseAll() } }
        try first.session.start(at: .board)
        try second.session.start(at: .board)
        try elsewhere.session.start(at: .home)
        #expect(first.listening.withLock { $0 } == ["board"])
        #expect(elsewhere.listening.withLock { $0 }.isEmpty)
        try first.session.perform("draft", value: "Hello", on: "board")
        try first.session.perform("post", on: "board")
        Self.deliverAll([first, second, elsewhere])
        let author = try #require(first.board?["author"])
        let expected: JSONValue = [["id": 1, "author": author, "text": "Hello"]]
        #expect(first.board?["messages"] == expected)
        #expect(second.board?["messages"] == expected)
        #expect(second.log.last?.input == .topic(name: "board", value: ["author": author, "text": "Hello"]))
        #expect(first.log.last?.input == .topic(name: "board", value: ["author": author, "text": "Hello"]))
        #expect(!elsewhere.log.contains { if case .topic = $0.input { true } else { false } })
    }

    @Test func aReleasedBoardStopsListeningAndReceivesNothing() throws {
        let node = Node()
        defer { node.session.releaseAll() }
        try node.session.start(at: .board)
        #expect(node.listening.withLock { $0 } == ["board"])
        try node.session.start(at: .home)  // a root navigation releases the board
        #expect(node.listening.withLock { $0 }.isEmpty)
        let before = node.session.inputNumber
        #expect(node.session.receive(TopicMessage(topic: "board", value: ["author": "a", "text": "b"])) == nil)
        #expect(node.session.inputNumber == before)
    }

    @Test func replayingTheLogGivesTheSameBoardRevisionsAndSequence() throws {
        let first = Node(), second = Node()
        defer { first.session.releaseAll(); second.session.releaseAll() }
        try first.session.start(at: .board)
        try second.session.start(at: .home)
        try second.session.navigate(.open("board", parameters: [:]))
        for (node, text) in [(first, "one"), (second, "two"), (first, "three")] {
            try node.session.perform("draft", value: .string(text), on: "board")
            try node.session.perform("post", on: "board")
            Self.deliverAll([first, second])
        }
        #expect(second.board?["count"] == 3)
        for node in [first, second] {
            let restored = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
            defer { restored.releaseAll() }
            let report = restored.restore(from: node.log)
            #expect(report.divergedUnits.isEmpty && report.mismatchedRecords.isEmpty)
            #expect(restored.pages == node.session.pages)
            #expect(restored.sequence == node.session.sequence)
            #expect(restored.inputNumber == node.session.inputNumber)
            // The replay published nothing and subscribed nothing live: the listener, installed now, hears the topics.
            let heard = Mutex<[TopicEvent]>([])
            restored.setTopicListener { event in heard.withLock { $0.append(event) } }
            #expect(heard.withLock { $0 } == [.subscribed("board")])
        }
    }

    @Test func aBoardIsWrittenDownInASnapshotAndGoesOnFromItLikeOneReplayedFromItsLog() throws {
        let node = Node()
        defer { node.session.releaseAll() }
        try node.session.start(at: .board)
        for number in 1...60 {
            node.session.receive(
                TopicMessage(topic: "board", value: ["author": "guest-0003", "text": .string("#\(number)")]))
        }
        try node.session.perform("draft", value: "half typed", on: "board")
        // A board waits for nothing: its session can be written down however many messages it took.
        let snapshot = try #require(node.session.takeSnapshot())
        let stored = try SessionSnapshot(json: try JSONValue(parsing: snapshot.json.jsonBytes))
        let fromSnapshot = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
        let fromLog = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
        defer { fromSnapshot.releaseAll(); fromLog.releaseAll() }
        #expect(fromSnapshot.restore(from: stored, records: []).divergedUnits.isEmpty)
        #expect(fromLog.restore(from: node.log).divergedUnits.isEmpty)
        #expect(fromSnapshot.pages == node.session.pages && fromLog.pages == node.session.pages)
        #expect(node.board?["messages"]?[0]?["text"] == "#11")
        // Both go on alike: the next message, and the draft posted.
        let next = TopicMessage(topic: "board", value: ["author": "guest-0004", "text": "next"])
        #expect(fromSnapshot.receive(next) != nil && fromLog.receive(next) != nil)
        let posted = try fromSnapshot.perform("post", on: "board")
        let expected = try fromLog.perform("post", on: "board")
        #expect(posted.patch == expected.patch && posted.sequence == expected.sequence)
        #expect(fromSnapshot.pages == fromLog.pages)
    }

    @Test func theSameInputsOnFreshPairsGiveTheSameViewsRevisionsAndSequences() throws {
        func run() throws -> ([PageSnapshot], Int, [InputRecord]) {
            let node = Node()
            defer { node.session.releaseAll() }
            try node.session.start(at: .board)
            try node.session.perform("draft", value: "x", on: "board")
            try node.session.perform("post", on: "board")
            Self.deliverAll([node])
            node.session.receive(TopicMessage(topic: "board", value: ["author": "guest-0002", "text": "y"]))
            return (node.session.pages, node.session.sequence, node.log)
        }
        let (pages, sequence, log) = try run()
        let (againPages, againSequence, againLog) = try run()
        #expect(pages == againPages && sequence == againSequence)
        #expect(log.map(\.digests) == againLog.map(\.digests))
        #expect(log.map(\.jsonBytes) == againLog.map(\.jsonBytes))
    }
}
