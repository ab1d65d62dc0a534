@testable import MVVMR
import Testing

@Suite struct LifecycleTests {
    @Test func releasingAPageFreesItsViewModelAndEveryStream() throws {
        let counter = LifeCounter()
        let (session, _) = makeSession(root: .counter, services: exampleServices(counter: counter))
        try session.start()
        #expect(counter.live == 1)
        try session.perform("increment", on: "counter")
        try session.start(at: .greeting)
        #expect(counter.live == 0)
    }

    @Test func releaseAllFreesEveryPage() throws {
        let counter = LifeCounter()
        let (session, _) = makeSession(root: .counter, services: exampleServices(counter: counter))
        try session.start()
        _ = try session.snapshot(of: "dashboard")
        session.releaseAll()
        #expect(counter.live == 0)
        #expect(session.pages.isEmpty)
        #expect(session.navigation.stack.isEmpty)
    }

    @Test func droppingASessionWithoutReleasingItFreesItsPages() throws {
        let counter = LifeCounter()
        do {
            let (session, _) = makeSession(root: .counter, services: exampleServices(counter: counter))
            try session.start()
            try session.perform("increment", on: "counter")
            #expect(counter.live == 1)
        }
        #expect(counter.live == 0)
    }

    @Test func aReleasedPageLeavesNoLiveStreamNodeBehind() throws {
        // Bind a page by hand, keep weak references to its stream nodes, release it, and check
        // every node was freed: no cycle survives the page.
        weak var weakViewModel: CounterViewModel?
        weak var actionNode: StreamNode<Void>?
        weak var outputNode: StreamNode<Int>?
        do {
            let turn = SessionTurn()
            let document = PageDocument(unit: "counter", revision: 0, historyLimit: 4, turn: turn)
            let bag = SubscriptionBag()
            let page = Page(document: document, base: .root, subscriptions: bag, turn: turn)
            let registry = ActionRegistry()
            let context = UnitContext(unit: "counter", scheduler: .virtual())
            let view = CounterView()
            let input = view.input(from: Actions(registry: registry, prefix: ""))
            let viewModel = CounterViewModel(context: context)
            let output = viewModel.transform(input)
            view.bind(output, to: page)
            weakViewModel = viewModel
            actionNode = input.increment.node
            outputNode = output.count.node
            #expect(outputNode?.observerCount == 2)
            bag.dispose()
            #expect(outputNode?.observerCount == 0)
        }
        #expect(weakViewModel == nil)
        #expect(actionNode == nil)
        #expect(outputNode == nil)
    }

    @Test func aReleasedPageFreesTheWriterOfAStateBoundWhole() throws {
        // The writer keeps its state's container from one write to the next, and the container refers back to it:
        // the page's release must still free both.
        let watcher = WriterWatcher()
        do {
            let bag = SubscriptionBag()
            let (relay, page) = pageBindingAWatchedState(watcher, subscriptions: bag)
            relay.accept(WatchedState(count: 3, watcher: watcher))
            #expect(watcher.writer != nil)
            #expect(watcher.writer?.keptContainer != nil)
            withExtendedLifetime(page) { bag.dispose() }
        }
        #expect(watcher.writer == nil)
    }

    @Test func aPageDroppedWithoutAReleaseFreesTheWriterOfAStateBoundWhole() throws {
        // Dropping a page's objects without disposing its subscriptions frees them too (as a session dropped
        // without a release frees its pages): the writer and its kept container are no cycle left behind.
        let watcher = WriterWatcher()
        do {
            let (relay, page) = pageBindingAWatchedState(watcher, subscriptions: SubscriptionBag())
            withExtendedLifetime((relay, page)) { #expect(watcher.writer?.keptContainer != nil) }
        }
        #expect(watcher.writer == nil)
    }

    /// A page with a ``WatchedState`` bound whole from a relay, written twice (so its writer keeps a container).
    private func pageBindingAWatchedState(
        _ watcher: WriterWatcher, subscriptions: SubscriptionBag
    ) -> (DriverRelay<WatchedState>, Page) {
        let relay = DriverRelay(WatchedState(count: 1, watcher: watcher))
        let turn = SessionTurn()
        let document = PageDocument(unit: "x", revision: 0, historyLimit: 4, turn: turn)
        let page = Page(document: document, base: .root, subscriptions: subscriptions, turn: turn)
        page.bind(relay.driver)
        relay.accept(WatchedState(count: 2, watcher: watcher))
        return (relay, page)
    }

    @Test func aDriverBoundAtTwoPathsRunsItsWorkOnce() throws {
        var runs = 0
        let relay = DriverRelay(1)
        let driver = relay.driver.map { value -> Int in
            runs += 1
            return value
        }
        let turn = SessionTurn()
        let document = PageDocument(unit: "x", revision: 0, historyLimit: 4, turn: turn)
        let bag = SubscriptionBag()
        let page = Page(document: document, base: .root, subscriptions: bag, turn: turn)
        page.bind(driver, at: "/a")
        page.bind(driver, at: "/b")
        #expect(runs == 1)
        document.startRecording()
        relay.accept(2)
        #expect(runs == 2)
        #expect(document.commit()?.count == 2)
        bag.dispose()
        #expect(relay.observerCount == 0)
    }
}

/// Holds, weakly, the writer that last encoded a ``WatchedState``.
private final class WriterWatcher: @unchecked Sendable {
    // @unchecked Sendable: used by one test on one thread.
    weak var writer: StateWriter?
}

/// A state bound whole that notes the writer encoding it.
private struct WatchedState: Encodable, Equatable, Sendable {
    var count: Int
    let watcher: WriterWatcher

    enum CodingKeys: String, CodingKey { case count }

    func encode(to encoder: any Encoder) throws {
        watcher.writer = (encoder as? StateMemberEncoder)?.writer
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(count, forKey: .count)
    }

    static func == (left: WatchedState, right: WatchedState) -> Bool { left.count == right.count }
}
