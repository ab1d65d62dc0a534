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
            registry: UnitRegistry(root: root, units: allExampleUnits + [.tally, .board, .noted, .flash, .shelf, .picker]), services: services,
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
        #expect(fixture.session.hasPendingTimersOrWork)
        // Once the dashboard (and its timer) is gone, the tally can.
        try fixture.session.start(at: .tally)
        #expect(!fixture.session.hasPendingTimersOrWork)
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

// MARK: - Pages that bind again differently from how they were first bound

/// Writes `/note` only once a note is given (a Signal), and `/count` at once: a page restored with a note writes
/// `/note` first, so its members come in another order than the live page's.
struct NotedInput {
    let note: Signal<String>
    let bump: Signal<Void>
}

struct NotedOutput {
    let note: Signal<String>
    let count: Driver<Int>
}

struct NotedView: View {
    func input(from actions: Actions<NamedAction>) -> NotedInput {
        NotedInput(note: actions.signal("note", of: String.self), bump: actions.signal("bump"))
    }

    func bind(_ output: NotedOutput, to page: Page) {
        page.bind(output.note, at: "/note")
        page.bind(output.count, at: "/count")
    }
}

struct NotedState: Codable, Sendable {
    var note: String?
    var count = 0
}

final class NotedViewModel: RestorableViewModel {
    private var state: NotedState
    init(context: UnitContext) { state = NotedState() }
    init(context: UnitContext, restoring savedState: NotedState) { state = savedState }
    var savedState: NotedState? { state }

    func transform(_ input: NotedInput) -> NotedOutput {
        let notes = input.note.map { [weak self] note -> String in
            self?.state.note = note
            return note
        }
        let counts = input.bump.scan(state.count) { [weak self] count, _ in
            self?.state.count = count + 1
            return count + 1
        }
        return NotedOutput(
            note: state.note.map { notes.startWith($0) } ?? notes, count: counts.asDriver(startingWith: state.count))
    }
}

/// Shows "saved" when bound, cleared by a timer a second later; restored, it shows what it showed and starts the
/// timer again all the same (which then changes nothing): binding it again starts a timer the live page no longer has.
struct FlashOutput {
    let flash: Driver<String>
    let count: Driver<Int>
}

struct FlashView: View {
    func input(from actions: Actions<NamedAction>) -> Signal<Void> { actions.signal("bump") }

    func bind(_ output: FlashOutput, to page: Page) {
        page.bind(output.flash, at: "/flash")
        page.bind(output.count, at: "/count")
    }
}

struct FlashState: Codable, Sendable {
    var flash = "saved"
    var count = 0
}

final class FlashViewModel: RestorableViewModel {
    private let scheduler: Scheduler
    private var state: FlashState
    init(context: UnitContext) {
        scheduler = context.scheduler
        state = FlashState()
    }
    init(context: UnitContext, restoring savedState: FlashState) {
        scheduler = context.scheduler
        state = savedState
    }
    var savedState: FlashState? { state }

    func transform(_ input: Signal<Void>) -> FlashOutput {
        let cleared = Signal<Int>.never.startWith(0).debounce(.seconds(1), on: scheduler).map { [weak self] _ -> String in
            self?.state.flash = ""
            return ""
        }
        let counts = input.scan(state.count) { [weak self] count, _ in
            self?.state.count = count + 1
            return count + 1
        }
        return FlashOutput(flash: cleared.asDriver(startingWith: state.flash), count: counts.asDriver(startingWith: state.count))
    }
}

/// A shelf shows the label a picker pushed above it sends back.
struct ShelfInput { let pick: Signal<Void> }
struct ShelfOutput {
    let label: Driver<String>
    let route: Signal<Route>
}

struct ShelfView: View {
    func input(from actions: Actions<NamedAction>) -> ShelfInput { ShelfInput(pick: actions.signal("pick")) }
    func bind(_ output: ShelfOutput, to page: Page) {
        page.bind(output.label, at: "/label")
        page.route(output.route)
    }
}

final class ShelfViewModel: RestorableViewModel {
    private let callbacks: Signal<String>
    private var label: String
    init(context: UnitContext) throws {
        callbacks = context.callbacks(of: String.self)
        label = "none"
    }
    init(context: UnitContext, restoring savedState: String) throws {
        if context.services[RestoreSwitch.self]?.fails == true {
            throw PageError(.bindingFailed, "the saved shelf no longer decodes")
        }
        callbacks = context.callbacks(of: String.self)
        label = savedState
    }
    var savedState: String? { label }

    func transform(_ input: ShelfInput) -> ShelfOutput {
        let labels = callbacks.map { [weak self] label -> String in
            self?.label = label
            return label
        }
        return ShelfOutput(label: labels.asDriver(startingWith: label), route: input.pick.map { Route.push(.picker) })
    }
}

struct PickerView: View {
    func input(from actions: Actions<NamedAction>) -> Signal<String> { actions.signal("choose", of: String.self) }
    func bind(_ output: Signal<Route>, to page: Page) { page.route(output) }
}

final class PickerViewModel: ViewModel {
    init(context: UnitContext) {}
    func transform(_ input: Signal<String>) -> Signal<Route> { input.map { Route.back(returning: $0) } }
}

extension UnitCase {
    static let noted = UnitCase("noted", view: NotedView.self, viewModel: NotedViewModel.self)
    static let flash = UnitCase("flash", view: FlashView.self, viewModel: FlashViewModel.self)
    static let shelf = UnitCase("shelf", view: ShelfView.self, viewModel: ShelfViewModel.self)
    static let picker = UnitCase("picker", view: PickerView.self, viewModel: PickerViewModel.self)
}

extension HibernationTests {
    /// The records of `fixture`'s session replayed into a fresh session: what diverged (nothing, when hibernation is
    /// invisible to the log).
    static func replayDivergence(of fixture: Fixture) -> [String] {
        fixture.session.waitUntilDelivered()
        let replayed = Self.fixture()
        let report = replayed.session.restore(from: fixture.records.withLock { $0 })
        return report.divergedUnits + report.mismatchedRecords.map(String.init)
    }

    @Test func aWokenPageKeepsTheTextOfItsViewAndItsLogReplays() throws {
        let awake = Self.fixture(root: .noted)
        let sleepy = Self.fixture(root: .noted)
        for fixture in [awake, sleepy] {
            try fixture.session.start()
            try fixture.session.perform("note", value: "hi", on: "noted")
        }
        #expect(sleepy.session.hibernateIdlePages() == 1)
        for fixture in [awake, sleepy] { try fixture.session.perform("bump", on: "noted") }
        #expect(try sleepy.session.read("noted").encodedView == awake.session.read("noted").encodedView)
        #expect(String(decoding: try sleepy.session.read("noted").encodedView, as: UTF8.self) == #"{"count":1,"note":"hi"}"#)
        #expect(Self.replayDivergence(of: sleepy).isEmpty)
    }

    @Test func aTimerTheBindingAgainStartsIsCancelled() throws {
        let awake = Self.fixture(root: .flash)
        let sleepy = Self.fixture(root: .flash)
        for fixture in [awake, sleepy] {
            try fixture.session.start()
            fixture.session.advanceTime(by: .seconds(2))
            try fixture.session.perform("bump", on: "flash")
        }
        #expect(try sleepy.session.read("flash").snapshot.view["flash"] == "")
        #expect(sleepy.session.hibernateIdlePages() == 1)
        for fixture in [awake, sleepy] {
            try fixture.session.perform("bump", on: "flash")
            fixture.session.advanceTime(by: .seconds(2))
        }
        awake.session.waitUntilDelivered()
        sleepy.session.waitUntilDelivered()
        #expect(sleepy.records.withLock { $0 } == awake.records.withLock { $0 })
        #expect(try sleepy.session.read("flash").snapshot == awake.session.read("flash").snapshot)
        #expect(sleepy.session.takeSnapshot() == awake.session.takeSnapshot())
        #expect(Self.replayDivergence(of: sleepy).isEmpty)
    }

    @Test func anActionRefusedAfterAWakeLeavesThePageAsleepAndUnchanged() throws {
        let fixture = Self.fixture()
        try fixture.session.start()
        try fixture.session.perform("add", value: 2, on: "tally")
        let before = try fixture.session.read("tally")
        fixture.session.hibernateIdlePages()
        fixture.motto.set("brisk")
        #expect(throws: PageError.self) { try fixture.session.perform("add", value: "two", on: "tally") }
        #expect(throws: PageError.self) { try fixture.session.perform("subtract", value: 2, on: "tally") }
        #expect(fixture.session.hibernatingPageCount == 1)
        let read = try fixture.session.read("tally")
        #expect(read.snapshot == before.snapshot)
        #expect(read.encodedView == before.encodedView)
        // The next accepted action carries the Model's change with its own.
        let result = try fixture.session.perform("add", value: 1, on: "tally")
        #expect(result.rev == before.snapshot.rev + 1)
        let operations = Set(result.patch?.operations ?? [])
        #expect(operations.contains(.replace(path: pointer("/motto"), value: "brisk")))
    }

    @Test func aBackCallbackWakesThePageBelowAndIsLoggedAsWithoutHibernation() throws {
        let awake = Self.fixture(root: .shelf)
        let sleepy = Self.fixture(root: .shelf)
        for fixture in [awake, sleepy] {
            try fixture.session.start()
            try fixture.session.perform("pick", on: "shelf")
        }
        #expect(sleepy.session.hibernateIdlePages() == 2)
        let expected = try awake.session.perform("choose", value: "blue", on: "picker")
        let got = try sleepy.session.perform("choose", value: "blue", on: "picker")
        #expect(got.events == expected.events)
        #expect(got.navigationFailure == nil)
        #expect(try sleepy.session.read("shelf").snapshot.view["label"] == "blue")
        awake.session.waitUntilDelivered()
        sleepy.session.waitUntilDelivered()
        #expect(sleepy.records.withLock { $0 } == awake.records.withLock { $0 })
        #expect(Self.replayDivergence(of: sleepy).isEmpty)
    }

    @Test func aBackCallbackToAPageThatCannotBeBoundAgainIsANavigationFailure() throws {
        let fixture = Self.fixture(root: .shelf)
        try fixture.session.start()
        try fixture.session.perform("pick", on: "shelf")
        fixture.session.hibernateIdlePages()
        fixture.restoreSwitch.set(true)
        let result = try fixture.session.perform("choose", value: "blue", on: "picker")
        #expect(result.navigationFailure?.code == .bindingFailed)
        #expect(result.navigation?.kind == .back)
        #expect(fixture.session.navigation.stack == ["shelf"])
        #expect(try fixture.session.read("shelf").snapshot.view["label"] == "none")
    }

    @Test func aTimerOfAnotherPageLeavesAHibernatingPageAsItWasBound() throws {
        let awake = Self.fixture()
        let sleepy = Self.fixture()
        for fixture in [awake, sleepy] { try fixture.session.start() }
        #expect(sleepy.session.hibernateIdlePages() == 1)
        for fixture in [awake, sleepy] {
            _ = try fixture.session.snapshot(of: "flash")
            fixture.session.advanceTime(by: .seconds(2))
        }
        let snapshot = try #require(sleepy.session.takeSnapshot())
        #expect(snapshot.pages.first { $0.unit == "tally" }?.restoration == .bindAgain)
        #expect(Self.replayDivergence(of: sleepy).isEmpty)
    }

    @Test func aHibernatingSessionsLogReplaysWithoutDivergence() throws {
        let sleepy = Self.fixture()
        try sleepy.session.start()
        for step in 1...4 {
            sleepy.session.hibernateIdlePages()
            try sleepy.session.perform(step % 2 == 0 ? "roll" : "add", value: step % 2 == 0 ? .null : 3, on: "tally")
        }
        #expect(Self.replayDivergence(of: sleepy).isEmpty)
    }
}
