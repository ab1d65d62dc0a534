import MVVMR
import MVVMRTesting
import Testing

@Suite struct StreamRecorderTests {
    @Test func recordsDriverValuesAndSignalEvents() {
        let relay = DriverRelay(1)
        let taps = Relay<Void>()
        let values = StreamRecorder(relay.driver)
        let events = StreamRecorder(taps.signal)
        values.expect([1])
        relay.accept(2)
        relay.accept(3)
        taps.accept(())
        values.expect([2, 3])
        events.expectEvents(1)
    }

    @Test func unassertedValuesFailTheTest() {
        let relay = DriverRelay("a")
        let values = StreamRecorder(relay.driver)
        withKnownIssue {
            values.finish()
        }
    }

    @Test func wrongValuesFailTheTest() {
        let relay = DriverRelay("a")
        let values = StreamRecorder(relay.driver)
        withKnownIssue {
            values.expect(["b"])
        }
    }

    @Test func testsAViewModelAloneWithVirtualTime() async throws {
        let scheduler = Scheduler.virtual()
        let viewModel = TallyViewModel(context: UnitContext(unit: "tally", scheduler: scheduler))
        let increment = Relay<Void>()
        let load = Relay<Void>()
        let output = viewModel.transform(
            Counter2Input(increment: increment.signal, load: load.signal, next: .never))
        let count = StreamRecorder(output.count)
        let loaded = StreamRecorder(output.loaded)
        let seconds = StreamRecorder(output.seconds)
        count.expect([0])
        loaded.expect(["idle"])
        seconds.expect([0])
        increment.accept(())
        count.expect([1])
        load.accept(())
        await scheduler.runPendingWork()
        loaded.expect(["loaded"])
        scheduler.advance(by: .seconds(2))
        seconds.expect([1, 2])
    }
}
