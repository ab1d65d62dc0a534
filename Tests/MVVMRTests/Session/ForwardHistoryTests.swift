import JSONPatch
import MVVMR
import Synchronization
import Testing

/// `back` keeps the popped page bound in the forward list; `forward` puts it back as it was; any new page in
/// the flow clears the list; the list is bounded; and a restored session brings it back exactly.
@Suite struct ForwardHistoryTests {
    /// Keeps what a session's recorder receives.
    final class Recorded: Sendable {
        private let entries = Mutex<[InputRecord]>([])
        var records: [InputRecord] { entries.withLock { $0 } }
        func append(_ record: InputRecord) { entries.withLock { $0.append(record) } }
    }

    /// greeting (root) → counter (opened by the client) with two increments.
    private func countedTwice(
        counter: LifeCounter? = nil, forwardLimit: Int = PageSession.defaultForwardLimit
    ) throws -> (PageSession, Recorded) {
        let session = PageSession(
            registry: UnitRegistry(root: .greeting, units: allExampleUnits), services: exampleServices(counter: counter),
            clock: .virtual, forwardLimit: forwardLimit)
        let recorded = Recorded()
        session.setRecorder { record, _ in recorded.append(record) }
        try session.start()
        try session.navigate(.open("counter"))
        try session.perform("increment", on: "counter")
        try session.perform("increment", on: "counter")
        return (session, recorded)
    }

    private func count(_ session: PageSession) -> JSONValue? {
        session.pages.first { $0.unit == "counter" }?.view["count"]
    }

    @Test func backKeepsThePageAndForwardPutsItBackWithItsState() throws {
        let (session, _) = try countedTwice()
        let back = try session.navigate(.back)
        #expect(back.navigation?.kind == .back)
        #expect(back.state == NavigationState(stack: ["greeting"], presented: nil, forward: ["counter"]))
        #expect(count(session) == 2)

        let forward = try session.navigate(.forward)
        let navigation = try #require(forward.navigation)
        #expect(navigation.kind == .forward)
        #expect(navigation.unit == "counter")
        #expect(navigation.state == NavigationState(stack: ["greeting", "counter"], presented: nil, forward: []))
        // The same page, not a fresh one: its revision did not move and its view is what it was.
        #expect(navigation.page.rev == 2)
        #expect(navigation.page.view["count"] == 2)
        let next = try session.perform("increment", on: "counter")
        #expect(next.rev == 3)
        #expect(next.patch == JSONPatch([
            .replace(path: pointer("/count"), value: 3), .replace(path: pointer("/stats/count"), value: 3),
        ]))
    }

    @Test func forwardWithNothingToGoToIsRefusedAndChangesNothing() throws {
        let (session, recorded) = try countedTwice()
        let before = (session.sequence, session.inputNumber, recorded.records.count)
        let refused = #expect(throws: PageError.self) { try session.navigate(.forward) }
        #expect(refused?.code == .nothingForward)
        #expect(session.sequence == before.0)
        #expect(session.inputNumber == before.1)
        #expect(recorded.records.count == before.2)
        #expect(session.navigation == NavigationState(stack: ["greeting", "counter"], presented: nil))
    }

    @Test func openOfTheNearestForwardPageGoesForward() throws {
        let (session, _) = try countedTwice()
        try session.navigate(.back)
        let opened = try session.navigate(.open("counter"))
        #expect(opened.navigation?.kind == .forward)
        #expect(opened.navigation?.page.rev == 2)
        #expect(count(session) == 2)
    }

    @Test func aNewPushClearsTheForwardListAndReleasesItsPages() throws {
        let counter = LifeCounter()
        let (session, _) = try countedTwice(counter: counter)
        try session.navigate(.back)
        #expect(counter.live == 1)
        let pushed = try session.navigate(.open("search"))
        #expect(pushed.navigation?.kind == .push)
        #expect(pushed.state.forward == [])
        #expect(counter.live == 0)
        #expect(!session.pages.map(\.unit).contains("counter"))
        // Opening the counter again now binds a fresh page, its revision going on.
        let fresh = try session.navigate(.open("counter"))
        #expect(fresh.navigation?.kind == .push)
        #expect(fresh.navigation?.page.view["count"] == 0)
        #expect(fresh.navigation?.page.rev == 3)
    }

    @Test func openThatPopsBackKeepsEveryPoppedPageNearestFirst() throws {
        let (session, _) = try countedTwice()
        try session.navigate(.open("search"))
        let popped = try session.navigate(.open("greeting"))
        #expect(popped.navigation?.kind == .back)
        #expect(popped.state == NavigationState(stack: ["greeting"], presented: nil, forward: ["counter", "search"]))
        try session.navigate(.forward)
        let second = try session.navigate(.forward)
        #expect(second.state == NavigationState(stack: ["greeting", "counter", "search"], presented: nil, forward: []))
        #expect(count(session) == 2)
    }

    @Test func theForwardListIsBoundedAndReleasesItsOldestPage() throws {
        let counter = LifeCounter()
        let session = PageSession(
            registry: UnitRegistry(root: .greeting, units: allExampleUnits), services: exampleServices(counter: counter),
            clock: .virtual, forwardLimit: 1)
        try session.start()
        try session.navigate(.open("search"))
        try session.navigate(.open("counter"))
        try session.perform("increment", on: "counter")
        #expect(try session.navigate(.back).state.forward == ["counter"])
        #expect(counter.live == 1)
        // A second back: search is nearest; the counter, beyond the bound of one, is released.
        let second = try session.navigate(.back)
        #expect(second.state == NavigationState(stack: ["greeting"], presented: nil, forward: ["search"]))
        #expect(counter.live == 0)
        #expect(session.pages.map(\.unit) == ["greeting", "search"])
        #expect(throws: PageError.self) { try session.perform("increment", on: "counter") }
    }

    @Test func aPageInTheForwardListTakesNoAction() throws {
        let (session, _) = try countedTwice()
        try session.navigate(.back)
        let refused = #expect(throws: PageError.self) { try session.perform("increment", on: "counter") }
        #expect(refused?.code == .pageNotBound)
        #expect(count(session) == 2)
    }

    @Test func aPresentedPageGoesForwardPresentedAgain() throws {
        let (session, _) = makeSession(root: .login)
        try session.start()
        try session.perform("login", value: "ann", on: "login")
        try session.perform("about", on: "main")
        let dismissed = try session.navigate(.back)
        #expect(dismissed.state == NavigationState(stack: ["main"], presented: nil, forward: ["about"]))
        let again = try session.navigate(.forward)
        #expect(again.state == NavigationState(stack: ["main", "about"], presented: "about", forward: []))
    }

    @Test func aSessionReplayedFromItsLogHasTheForwardListAndItsPagesState() throws {
        let (live, recorded) = try countedTwice()
        try live.navigate(.back)
        let restored = PageSession(
            registry: UnitRegistry(root: .greeting, units: allExampleUnits), services: exampleServices(), clock: .virtual)
        let report = restored.restore(from: recorded.records)
        #expect(report.divergedUnits.isEmpty)
        #expect(report.mismatchedRecords.isEmpty)
        #expect(restored.navigation == live.navigation)
        #expect(restored.navigation.forward == ["counter"])
        #expect(restored.pages == live.pages)
        let forward = try restored.navigate(.forward)
        let expected = try live.navigate(.forward)
        #expect(forward.navigation == expected.navigation)
        #expect(forward.sequence == expected.sequence)
        #expect(forward.navigation?.page.view["count"] == 2)
    }

    @Test func theForwardInputIsLoggedAndReplaysToTheSameSession() throws {
        let (live, recorded) = try countedTwice()
        try live.navigate(.back)
        try live.navigate(.forward)
        try live.perform("increment", on: "counter")
        #expect(recorded.records.map(\.input).contains(.navigate(.forward)))
        let restored = PageSession(
            registry: UnitRegistry(root: .greeting, units: allExampleUnits), services: exampleServices(), clock: .virtual)
        let report = restored.restore(from: recorded.records)
        #expect(report.mismatchedRecords.isEmpty)
        #expect(restored.pages == live.pages)
        #expect(restored.sequence == live.sequence)
        #expect(restored.navigation == live.navigation)
    }
}
