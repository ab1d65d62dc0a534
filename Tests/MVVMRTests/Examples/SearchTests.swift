import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

// The search examples of the guide (docs/GUIDE.md, sections 10 and 12).

@Suite struct SearchTests {
    let services = exampleServices()

    @Test func searchesAfterTypingSettles() async throws {
        let tester = try PageTester(.search, services: services)
        tester.send(SearchAction.query, "swift")  // debounce holds it back: nothing changes yet
        tester.advance(by: .milliseconds(300)) { $0[at: "/searching"] = true }
        await tester.runPendingWork { view in
            view[at: "/searching"] = false
            view[at: "/results"] = [["key": "swift", "title": "SWIFT"]]
        }
    }

    @Test func testsTheViewModelAlone() async throws {
        let scheduler = Scheduler.virtual()
        let viewModel = try SearchViewModel(context: UnitContext(unit: "search", services: services, scheduler: scheduler))
        let query = Relay<String>()
        let output = viewModel.transform(SearchInput(query: query.signal))
        let results = StreamRecorder(output.results.map { $0.map(\.title) })
        results.expect([[]])
        query.accept("swift")
        scheduler.advance(by: .milliseconds(300))
        await scheduler.runPendingWork()
        results.expect([["SWIFT"]])
    }
}
