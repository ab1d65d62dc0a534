@testable import MVVMR
import Testing

/// A reducer's state reaches a page directly (no stream node between them) and reaches a Driver's observers through
/// one node; the events are connected once for both, and disconnected, with the work they started, when neither is
/// left.
@Suite struct ReducerBindingTests {
    /// Adds each event to the state; a negative event starts async work (its result is the next event).
    private func makeOutput(
        scheduler: Scheduler = .virtual()
    ) -> (StateReducer<Int, Int>, Relay<Int>, StateOutput<Int>) {
        let reducer = StateReducer<Int, Int>(0)
        let events = Relay<Int>()
        let output = reducer.run(events.signal, on: scheduler) { state, event in
            state += event
            return event < 0 ? .run { 100 } : .none
        }
        return (reducer, events, output)
    }

    @Test func aPageAndADriverObserverBothSeeEachStateAndEachEventIsAppliedOnce() {
        let (reducer, events, output) = makeOutput()
        var written: [Int] = []
        var observed: [Int] = []
        let page = reducer.attach { written.append($0) }
        let observer = output.state.subscribe { observed.append($0) }
        events.accept(5)
        #expect(reducer.state == 5)
        #expect(written == [0, 5])
        #expect(observed == [0, 5])
        page.dispose()
        observer.dispose()
    }

    @Test func theEventsStayConnectedWhileEitherIsAndTheirWorkEndsWithTheLast() async {
        let scheduler = Scheduler.virtual()
        let (reducer, events, output) = makeOutput(scheduler: scheduler)
        var written: [Int] = []
        var observed: [Int] = []
        let page = reducer.attach { written.append($0) }
        let observer = output.state.subscribe { observed.append($0) }
        page.dispose()
        events.accept(2)
        #expect(observed == [0, 2])
        #expect(written == [0])
        events.accept(-1)
        #expect(scheduler.pendingWorkCount == 1)
        observer.dispose()
        #expect(scheduler.pendingWorkCount == 0)
        events.accept(7)
        await scheduler.runPendingWork()
        #expect(reducer.state == 1)
    }

    @Test func theOutputsStateIsOneDriverWhileItLives() {
        let (_, events, output) = makeOutput()
        var first: [Int] = []
        var second: [Int] = []
        let one = output.state.subscribe { first.append($0) }
        let two = output.state.subscribe { second.append($0) }
        events.accept(3)
        #expect(first == [0, 3])
        #expect(second == [0, 3])
        one.dispose()
        two.dispose()
    }

    @Test func aBoundReducerPageWritesItsStateAndItsChanges() throws {
        let (session, _) = makeSession(root: .todo)
        try session.start()
        let added = try session.perform("add", value: ["title": "Buy milk"], on: "todo")
        #expect(added.patch?.count == 2)
        let view = try #require(session.pages.first { $0.unit == "todo" }?.view)
        #expect(view["todos"]?[0]?["title"] == "Buy milk")
        #expect(view["shown"]?.arrayValue?.count == 1)
    }
}
