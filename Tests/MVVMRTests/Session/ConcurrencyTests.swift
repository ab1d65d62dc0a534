import JSONPatch
import MVVMR
import Synchronization
import Testing

@Suite struct ConcurrencyTests {
    @Test func concurrentActionsOnOneSessionAreSerialized() async throws {
        let seen = Mutex<[Int]>([])
        let session = PageSession(
            registry: UnitRegistry(root: .counter, units: []), clock: .realTime,
            eventSink: { event in
                if case .patch(let patch) = event.kind { seen.withLock { $0.append(patch.rev) } }
            })
        try session.start()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<250 { _ = try? session.perform("increment", on: "counter") }
                }
            }
        }
        #expect(session.pages.first?.view[pointer("/count")] == 1000)
        #expect(seen.withLock { $0 } == Array(1...1000))
    }

    @Test func sessionsRunInParallelWithAsyncWorkReentering() async throws {
        let sessions = (0..<8).map { _ in
            PageSession(registry: UnitRegistry(root: .search, units: []), services: exampleServices(), clock: .realTime)
        }
        for session in sessions { try session.start() }
        await withTaskGroup(of: Void.self) { group in
            for (index, session) in sessions.enumerated() {
                group.addTask {
                    for round in 0..<20 {
                        _ = try? session.perform("query", value: .string("q\(index) r\(round)"), on: "search")
                    }
                }
            }
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while sessions.contains(where: { $0.pages.first?.view[pointer("/results")] == [] }),
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        for (index, session) in sessions.enumerated() {
            #expect(
                session.pages.first?.view[pointer("/results")]
                    == [["key": .string("q\(index)"), "title": .string("Q\(index)")], ["key": "r19", "title": "R19"]])
            session.releaseAll()
        }
    }
}
