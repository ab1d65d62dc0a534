import JSONPatch
import MVVMR
import Synchronization
import Testing

@Suite struct AsyncAndTimerTests {
    @Test func asyncResultsReenterTheSessionAsTheirOwnPatch() async throws {
        let (session, events) = makeSession(root: .search)
        try session.start()
        _ = events.take()
        try session.perform("query", value: "a b", on: "search")
        #expect(events.take().isEmpty)
        session.advanceTime(by: .milliseconds(300))
        #expect(events.take().map(\.summary) == ["patch search 1"])
        #expect(session.pendingWorkCount == 1)
        await session.runPendingWork()
        let patches = events.take()
        #expect(patches.map(\.summary) == ["patch search 2"])
        #expect(session.pages.first?.view
                == ["results": [["key": "a", "title": "A"], ["key": "b", "title": "B"]], "searching": false])
    }

    @Test func aNewerQueryCancelsTheOlderCallSoNoStaleResultArrives() async throws {
        let (session, events) = makeSession(root: .search)
        try session.start()
        try session.perform("query", value: "old", on: "search")
        session.advanceTime(by: .milliseconds(300))
        try session.perform("query", value: "new", on: "search")
        session.advanceTime(by: .milliseconds(300))
        #expect(session.pendingWorkCount == 1)
        _ = events.take()
        await session.runPendingWork()
        #expect(session.pages.first?.view[pointer("/results")] == [["key": "new", "title": "NEW"]])
        #expect(events.all.count == 1)
    }

    @Test func identityKeyedArraysChangeByRowNotWhole() async throws {
        let (session, events) = makeSession(root: .search)
        try session.start()
        try session.perform("query", value: "a b c", on: "search")
        session.advanceTime(by: .milliseconds(300))
        await session.runPendingWork()
        try session.perform("query", value: "a c", on: "search")
        session.advanceTime(by: .milliseconds(300))
        _ = events.take()
        await session.runPendingWork()
        guard case .patch(let patch) = try #require(events.all.first).kind else {
            Issue.record("expected a patch")
            return
        }
        #expect(patch.patch.operations.contains(.remove(path: pointer("/results/1"))))
        #expect(!patch.patch.operations.contains { operation in
            if case .replace(let path, _) = operation { return path == pointer("/results") }
            return false
        })
    }

    @Test func partsTickAndTakeTheirOwnActions() throws {
        let (session, events) = makeSession(root: .dashboard)
        let start = try session.start()
        #expect(
            start.navigation?.page.view
                == ["title": "Dashboard", "clock": ["seconds": 0], "quote": ["text": "Stay hungry."]])
        #expect(UnitCase.dashboard.actions.map(\.name) == ["refresh", "quote.shuffle"])
        #expect(start.navigation?.page.actions.map(\.name) == ["refresh", "quote.shuffle"])
        _ = events.take()
        session.advanceTime(by: .seconds(2))
        #expect(events.take().map(\.summary) == ["patch dashboard 1", "patch dashboard 2"])
        let shuffled = try session.perform("quote.shuffle", on: "dashboard")
        #expect(shuffled.patch == JSONPatch([.replace(path: pointer("/quote/text"), value: "Less is more.")]))
        let unknown = #expect(throws: PageError.self) { try session.perform("shuffle", on: "dashboard") }
        #expect(unknown?.allowed == ["refresh", "quote.shuffle"])
    }

    @Test func aRealClockTicksThroughTheEventSink() async throws {
        let ticks = Mutex<[SessionEvent]>([])
        let session = PageSession(
            registry: UnitRegistry(root: .dashboard, units: []), clock: .realTime,
            eventSink: { event in ticks.withLock { $0.append(event) } })
        try session.start()
        let deadline = ContinuousClock.now + .seconds(15)  // a second's tick, on a pool of tasks other suites keep busy
        while ticks.withLock({ $0.count }) < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        session.releaseAll()
        let events = ticks.withLock { $0 }
        #expect(events.map(\.summary).prefix(2) == ["navigation root dashboard", "patch dashboard 1"])
        if case .patch(let patch) = events.dropFirst().first?.kind {
            #expect(patch.patch == JSONPatch([.replace(path: pointer("/clock/seconds"), value: 1)]))
        }
    }

    @Test func realAsyncWorkReentersFromATask() async throws {
        let received = Mutex<[SessionEvent]>([])
        let session = PageSession(
            registry: UnitRegistry(root: .search, units: []), services: exampleServices(), clock: .realTime,
            eventSink: { event in received.withLock { $0.append(event) } })
        try session.start()
        try session.perform("query", value: "x", on: "search")
        let deadline = ContinuousClock.now + .seconds(15)  // a second's tick, on a pool of tasks other suites keep busy
        while received.withLock({ $0.count }) < 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(session.pages.first?.view[pointer("/results")] == [["key": "x", "title": "X"]])
        #expect(session.pendingWorkCount == 0)
        session.releaseAll()
    }
}
