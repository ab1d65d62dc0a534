@testable import MVVMR
import Testing

@Suite struct TimingOperatorTests {
    @Test func debounceEmitsTheLatestAfterQuiet() {
        let scheduler = Scheduler.virtual()
        let source = Relay<String>()
        let collector = Collector(source.signal.debounce(.milliseconds(300), on: scheduler))
        source.accept("s")
        scheduler.advance(by: .milliseconds(100))
        source.accept("sw")
        scheduler.advance(by: .milliseconds(299))
        #expect(collector.values.isEmpty)
        scheduler.advance(by: .milliseconds(1))
        #expect(collector.values == ["sw"])
        source.accept("swift")
        collector.dispose()
        #expect(scheduler.scheduledTimerCount == 0)
        scheduler.advance(by: .seconds(1))
        #expect(collector.values == ["sw"])
        #expect(source.observerCount == 0)
    }

    @Test func throttleEmitsFirstThenLatestAtTheEndOfTheWindow() {
        let scheduler = Scheduler.virtual()
        let source = Relay<Int>()
        let collector = Collector(source.signal.throttle(.seconds(1), on: scheduler))
        source.accept(1)
        source.accept(2)
        source.accept(3)
        #expect(collector.values == [1])
        scheduler.advance(by: .seconds(1))
        #expect(collector.values == [1, 3])
        scheduler.advance(by: .seconds(1))
        source.accept(4)
        #expect(collector.values == [1, 3, 4])
        source.accept(5)
        collector.dispose()
        #expect(scheduler.scheduledTimerCount == 0)
        scheduler.advance(by: .seconds(5))
        #expect(collector.values == [1, 3, 4])
        #expect(source.observerCount == 0)
    }

    @Test func throttleWithoutLatestDropsHeldBackEvents() {
        let scheduler = Scheduler.virtual()
        let source = Relay<Int>()
        let collector = Collector(source.signal.throttle(.seconds(1), latest: false, on: scheduler))
        source.accept(1)
        source.accept(2)
        scheduler.advance(by: .seconds(1))
        source.accept(3)
        collector.dispose()
        #expect(collector.values == [1, 3])
    }

    @Test func intervalTicksEveryPeriodUntilDisposed() {
        let scheduler = Scheduler.virtual()
        let collector = Collector(scheduler.interval(.seconds(1)))
        scheduler.advance(by: .milliseconds(3500))
        #expect(collector.values == [0, 1, 2])
        collector.dispose()
        #expect(scheduler.scheduledTimerCount == 0)
        scheduler.advance(by: .seconds(3))
        #expect(collector.values == [0, 1, 2])
        #expect(scheduler.now == .milliseconds(6500))
    }

    @Test func performRunsAsyncWorkAndEmitsItsResultOnce() async {
        let scheduler = Scheduler.virtual()
        let collector = Collector(scheduler.perform { 6 * 7 })
        #expect(scheduler.pendingWorkCount == 1)
        #expect(collector.values.isEmpty)
        await scheduler.runPendingWork()
        #expect(collector.values == [42])
        #expect(scheduler.pendingWorkCount == 0)
        collector.dispose()
    }

    /// A failure arrives as a `RecordedError` with the error's description, live as after a restart (the
    /// session's log keeps the description, not the error).
    @Test func performCatchingErrorsDeliversFailures() async {
        struct Offline: Error {}
        let scheduler = Scheduler.virtual()
        let collector = Collector(
            scheduler.performCatchingErrors { () async throws -> Int in throw Offline() }.map { result -> String in
                switch result {
                case .success: return "success"
                case .failure(let error): return "\(type(of: error)): \(error)"
                }
            })
        await scheduler.runPendingWork()
        #expect(collector.values == ["RecordedError: Offline()"])
        collector.dispose()
    }

    @Test func flatMapLatestCancelsOlderWorkSoAStaleResultIsNeverEmitted() async {
        let scheduler = Scheduler.virtual()
        let queries = Relay<String>()
        let collector = Collector(queries.signal.flatMapLatest(on: scheduler) { query in query.uppercased() })
        queries.accept("old")
        queries.accept("new")
        #expect(scheduler.pendingWorkCount == 1)
        await scheduler.runPendingWork()
        #expect(collector.values == ["NEW"])
        queries.accept("gone")
        collector.dispose()
        #expect(scheduler.pendingWorkCount == 0)
        await scheduler.runPendingWork()
        #expect(collector.values == ["NEW"])
        #expect(queries.observerCount == 0)
    }
}
