@testable import MVVMR
import JSONPatch
import Synchronization
import Testing

// MARK: - A restorable page that draws random numbers and shows a Model's value read when it is bound.

struct TallyInput {
    let add: Signal<Int>
    let roll: Signal<Void>
}

struct TallyOutput {
    let count: Driver<Int>
    let rolled: Driver<Int>
    let motto: Driver<String>
}

struct TallyView: View {
    func input(from actions: Actions<NamedAction>) -> TallyInput {
        TallyInput(add: actions.signal("add", of: Int.self), roll: actions.signal("roll"))
    }

    func bind(_ output: TallyOutput, to page: Page) {
        page.bind(output.count, at: "/count")
        page.bind(output.rolled, at: "/rolled")
        page.bind(output.motto, at: "/motto")
    }
}

/// A Model value the tally page shows, read when the page is bound (a later change shows on the next binding).
final class Motto: Sendable {
    private let text = Mutex("steady")
    var value: String { text.withLock { $0 } }
    func set(_ value: String) { text.withLock { $0 = value } }
}

/// Makes restoring fail while set (a later deploy whose saved state no longer decodes, say).
final class RestoreSwitch: Sendable {
    private let failing = Mutex(false)
    var fails: Bool { failing.withLock { $0 } }
    func set(_ value: Bool) { failing.withLock { $0 = value } }
}

struct TallyState: Codable, Sendable, Hashable {
    var count = 0
    var rolled = 0
}

final class TallyViewModel: RestorableViewModel {
    private let token: LifeToken?
    private let random: SessionRandom
    private let motto: String
    private var state: TallyState

    init(context: UnitContext) {
        token = context.services[LifeCounter.self].map(LifeToken.init)
        random = context.random
        motto = context.services[Motto.self]?.value ?? ""
        state = TallyState()
    }

    init(context: UnitContext, restoring savedState: TallyState) throws {
        if context.services[RestoreSwitch.self]?.fails == true {
            throw PageError(.bindingFailed, "the saved tally no longer decodes")
        }
        token = context.services[LifeCounter.self].map(LifeToken.init)
        random = context.random
        motto = context.services[Motto.self]?.value ?? ""
        state = savedState
    }

    var savedState: TallyState? { state }

    func transform(_ input: TallyInput) -> TallyOutput {
        let token = token
        let counts = input.add.scan(state.count) { [weak self] count, step in
            _ = token
            self?.state.count = count + step
            return count + step
        }
        let random = random
        let rolls = input.roll.map { [weak self] () -> Int in
            let value = random.index(below: 1_000_000)
            self?.state.rolled = value
            return value
        }
        return TallyOutput(
            count: counts.asDriver(startingWith: state.count), rolled: rolls.asDriver(startingWith: state.rolled),
            motto: Driver.just(motto))
    }
}

extension UnitCase {
    static let tally = UnitCase("tally", view: TallyView.self, viewModel: TallyViewModel.self)
}

// MARK: - Tests

@Suite struct HibernationTests {
    final class Fixture: Sendable {
        let session: PageSession
        let records = Mutex<[InputRecord]>([])
        let events: RecordedEvents
        let lives: LifeCounter
        let motto: Motto
        let restoreSwitch: RestoreSwitch

        init(session: PageSession, events: RecordedEvents, lives: LifeCounter, motto: Motto, restoreSwitch: RestoreSwitch) {
            self.session = session
            self.events = events
            self.lives = lives
            self.motto = motto
            self.restoreSwitch = restoreSwitch
        }
    }

    static func fixture(root: UnitCase = .tally) -> Fixture {
        let lives = LifeCounter()
        let motto = Motto()
        let restoreSwitch = RestoreSwitch()
        var services = exampleServices(counter: lives)
        services.register(motto)
        services.register(restoreSwitch)
        let events = RecordedEvents()
        let session = PageSession(
            registry: UnitRegistry(root: root, units: allExampleUnits + [.tally, .board]), services: services,
            clock: .virtual, eventSink: { events.append($0) })
        let fixture = Fixture(session: session, events: events, lives: lives, motto: motto, restoreSwitch: restoreSwitch)
        session.setRecorder { [weak fixture] record, _ in fixture?.records.withLock { $0.append(record) } }
        return fixture
    }

    /// The same inputs to two sessions, one of them letting its pages hibernate before every input: what the
    /// clients get (results, events) and what the log keeps (records, digests included) must be the same.
    @Test func aSessionThatHibernatesBetweenInputsAnswersAndLogsAsOneThatNeverDoes() throws {
        let awake = Self.fixture()
        let sleepy = Self.fixture()
        var hibernations = 0
        for fixture in [awake, sleepy] { try fixture.session.start() }
        let inputs: [(String, JSONValue)] = [
            ("add", 2), ("roll", .null), ("add", 5), ("roll", .null), ("roll", .null), ("add", -1),
        ]
        for (action, value) in inputs {
            hibernations += sleepy.session.hibernateIdlePages()
            #expect(sleepy.session.hibernatingPageCount == 1)
            let expected = try awake.session.perform(action, value: value, on: "tally")
            let got = try sleepy.session.perform(action, value: value, on: "tally")
            #expect(got.rev == expected.rev)
            #expect(got.patch == expected.patch)
            #expect(got.events == expected.events)
            #expect(sleepy.session.hibernatingPageCount == 0)
        }
        #expect(hibernations == inputs.count)
        awake.session.waitUntilDelivered()
        sleepy.session.waitUntilDelivered()
        #expect(sleepy.records.withLock { $0 } == awake.records.withLock { $0 })
        #expect(sleepy.events.all == awake.events.all)
        #expect(sleepy.session.pages == awake.session.pages)
        // Waking counted no binding of the session's and moved no ordinal: the snapshots (bind count included) agree.
        #expect(sleepy.session.takeSnapshot() == awake.session.takeSnapshot())
        // Bound pages after the hibernations draw the seeds they would have: the session's bind count is unchanged.
        let fresh = try awake.session.snapshot(of: "counter")
        #expect(try sleepy.session.snapshot(of: "counter") == fresh)
        awake.session.waitUntilDelivered()
        sleepy.session.waitUntilDelivered()
        #expect(sleepy.records.withLock { $0 } == awake.records.withLock { $0 })
    }

    @Test func aHibernatingPageFreesItsViewModelAndStreamsAndKeepsItsDocument() throws {
        let fixture = Self.fixture()
        try fixture.session.start()
        try fixture.session.perform("add", value: 3, on: "tally")
        #expect(fixture.lives.live == 1)
        let before = try fixture.session.read("tally")
        #expect(fixture.session.hibernateIdlePages() == 1)
        #expect(fixture.lives.live == 0)
        let read = try fixture.session.read("tally")
        #expect(read.snapshot == before.snapshot)
        #expect(read.encodedView == before.encodedView)
        #expect(fixture.session.hibernateIdlePages() == 0)
        // A read does not wake it; an action does.
        #expect(fixture.session.hibernatingPageCount == 1)
        try fixture.session.perform("add", value: 1, on: "tally")
        #expect(fixture.lives.live == 1)
        #expect(try fixture.session.read("tally").snapshot.view["count"] == 4)
    }

    @Test func aClientBehindCatchesUpFromThePatchesKeptThroughHibernation() throws {
        let fixture = Self.fixture()
        try fixture.session.start()
        for step in 1...3 { try fixture.session.perform("add", value: JSONValue.int(step), on: "tally") }
        fixture.session.hibernateIdlePages()
        let result = try fixture.session.perform("add", value: 10, on: "tally", clientRevision: 1)
        #expect(result.rev == 4)
        #expect(result.snapshot == nil)
        let operations = result.patch?.operations ?? []
        #expect(operations.count == 3)
        #expect(operations.last == .replace(path: pointer("/count"), value: 16))
    }

    @Test func aPageNothingReachedHibernatesAndWakesAsItWasFirstBound() throws {
        // The counter is not restorable: it hibernates only while nothing has reached it since it was bound.
        let fixture = Self.fixture(root: .counter)
        try fixture.session.start()
        #expect(fixture.lives.live == 1)
        #expect(fixture.session.hibernateIdlePages() == 1)
        #expect(fixture.lives.live == 0)
        let result = try fixture.session.perform("increment", on: "counter")
        #expect(result.patch?.operations.count == 2)
        #expect(fixture.lives.live == 1)
        // Reached now, and without a saved state: it stays awake.
        #expect(fixture.session.hibernateIdlePages() == 0)
        #expect(fixture.lives.live == 1)
    }

    @Test func aModelChangedWhileThePageHibernatedReachesItsClientsAsAPatch() throws {
        let fixture = Self.fixture()
        try fixture.session.start()
        fixture.session.hibernateIdlePages()
        fixture.motto.set("brisk")
        let result = try fixture.session.perform("add", value: 1, on: "tally")
        #expect(result.rev == 1)
        let operations = Set(result.patch?.operations ?? [])
        #expect(operations.contains(.replace(path: pointer("/motto"), value: "brisk")))
        #expect(operations.contains(.replace(path: pointer("/count"), value: 1)))
        let view = try fixture.session.read("tally").snapshot.view
        #expect(view["motto"] == "brisk")
    }

    @Test func aPageThatCannotBeBoundAgainRefusesTheActionAndKeepsItsView() throws {
        let fixture = Self.fixture()
        try fixture.session.start()
        try fixture.session.perform("add", value: 7, on: "tally")
        let before = try fixture.session.read("tally").snapshot
        fixture.session.hibernateIdlePages()
        fixture.restoreSwitch.set(true)
        #expect(throws: PageError.self) { try fixture.session.perform("add", value: 1, on: "tally") }
        #expect(try fixture.session.read("tally").snapshot == before)
        #expect(fixture.session.hibernatingPageCount == 1)
        fixture.restoreSwitch.set(false)
        let result = try fixture.session.perform("add", value: 1, on: "tally")
        #expect(result.rev == before.rev + 1)
        #expect(try fixture.session.read("tally").snapshot.view["count"] == 8)
    }

    @Test func aSnapshotTakenWhileAPageHibernatesIsTheOneTakenWhileItIsAwake() throws {
        let awake = Self.fixture()
        let sleepy = Self.fixture()
        for fixture in [awake, sleepy] {
            try fixture.session.start()
            try fixture.session.perform("roll", on: "tally")
            try fixture.session.perform("add", value: 2, on: "tally")
        }
        sleepy.session.hibernateIdlePages()
        let snapshot = try #require(sleepy.session.takeSnapshot())
        #expect(snapshot == awake.session.takeSnapshot())
        // And a session restored from it goes on as the awake one does.
        let restored = Self.fixture()
        let report = restored.session.restore(from: snapshot, records: [])
        #expect(report.divergedUnits.isEmpty)
        let expected = try awake.session.perform("roll", on: "tally")
        #expect(try restored.session.perform("roll", on: "tally").patch == expected.patch)
        #expect(try sleepy.session.perform("roll", on: "tally").patch == expected.patch)
    }

    @Test func aPageNothingReachedIsSnapshottedAsBoundAgainWhetherItHibernatesOrNot() throws {
        let awake = Self.fixture()
        let sleepy = Self.fixture()
        for fixture in [awake, sleepy] { try fixture.session.start() }
        #expect(sleepy.session.hibernateIdlePages() == 1)
        let snapshot = try #require(sleepy.session.takeSnapshot())
        #expect(snapshot == awake.session.takeSnapshot())
        #expect(snapshot.pages.map(\.restoration) == [.bindAgain])
    }

    @Test func pagesOfASessionWithAPendingTimerStayAwake() throws {
        // The dashboard's clock part runs a timer: nothing of the session hibernates while it is pending.
        let fixture = Self.fixture(root: .dashboard)
        try fixture.session.start()
        _ = try fixture.session.snapshot(of: "tally")
        #expect(fixture.session.hibernateIdlePages() == 0)
        #expect(fixture.session.hibernatingPageCount == 0)
        // Once the dashboard (and its timer) is gone, the tally can.
        try fixture.session.start(at: .tally)
        #expect(fixture.session.hibernateIdlePages() == 1)
    }

    @Test func aPageListeningToATopicStaysAwakeAndGetsItsMessages() throws {
        let fixture = Self.fixture(root: .board)
        try fixture.session.start()
        _ = try fixture.session.snapshot(of: "tally")
        // The tally hibernates; the board, listening to a topic, does not.
        #expect(fixture.session.hibernateIdlePages() == 1)
        #expect(fixture.session.receive(TopicMessage(topic: "board", value: "hello")) != nil)
        #expect(try fixture.session.read("board").snapshot.view["latest"] == "hello")
    }
}

struct BoardOutput { let latest: Driver<String> }

struct BoardView: View {
    func bind(_ output: BoardOutput, to page: Page) { page.bind(output.latest, at: "/latest") }
}

final class BoardViewModel: ViewModel {
    private let context: UnitContext
    init(context: UnitContext) { self.context = context }
    func transform(_ input: NoInput) -> BoardOutput {
        BoardOutput(latest: context.messages(on: Topic<String>("board")).asDriver(startingWith: ""))
    }
}

extension UnitCase {
    static let board = UnitCase("board", view: BoardView.self, viewModel: BoardViewModel.self)
}
