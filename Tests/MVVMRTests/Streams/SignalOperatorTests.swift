@testable import MVVMR
import Testing

@Suite struct SignalOperatorTests {
    @Test func mapTransformsEachEventUntilDisposed() {
        let source = Relay<Int>()
        let collector = Collector(source.signal.map { $0 * 2 })
        source.accept(1)
        source.accept(2)
        collector.dispose()
        source.accept(3)
        #expect(collector.values == [2, 4])
        #expect(source.observerCount == 0)
    }

    @Test func filterPassesMatchingEventsUntilDisposed() {
        let source = Relay<Int>()
        let collector = Collector(source.signal.filter { $0.isMultiple(of: 2) })
        for value in 1...6 { source.accept(value) }
        collector.dispose()
        source.accept(8)
        #expect(collector.values == [2, 4, 6])
        #expect(source.observerCount == 0)
    }

    @Test func compactMapDropsNilUntilDisposed() {
        let source = Relay<String>()
        let collector = Collector(source.signal.compactMap { Int($0) })
        for text in ["1", "x", "3"] { source.accept(text) }
        collector.dispose()
        source.accept("4")
        #expect(collector.values == [1, 3])
        #expect(source.observerCount == 0)
    }

    @Test func mergeInterleavesInOrderAndTearsDownAll() {
        let first = Relay<String>()
        let second = Relay<String>()
        let collector = Collector(Signal.merge(first.signal, second.signal))
        first.accept("a")
        second.accept("b")
        first.accept("c")
        collector.dispose()
        second.accept("d")
        #expect(collector.values == ["a", "b", "c"])
        #expect(first.observerCount == 0 && second.observerCount == 0)
    }

    @Test func combineLatestWaitsForBothThenEmitsOnEither() {
        let numbers = Relay<Int>()
        let letters = Relay<String>()
        let collector = Collector(Signal.combineLatest(numbers.signal, letters.signal).map { "\($0)\($1)" })
        numbers.accept(1)
        letters.accept("a")
        numbers.accept(2)
        letters.accept("b")
        collector.dispose()
        numbers.accept(3)
        #expect(collector.values == ["1a", "2a", "2b"])
        #expect(numbers.observerCount == 0 && letters.observerCount == 0)
    }

    @Test func withLatestFromDriverSamplesItsCurrentValue() {
        let taps = Relay<Void>()
        let name = DriverRelay("Ann")
        let collector = Collector(taps.signal.withLatestFrom(name.driver))
        taps.accept(())
        name.accept("Bob")
        name.accept("Cid")
        taps.accept(())
        collector.dispose()
        taps.accept(())
        #expect(collector.values == ["Ann", "Cid"])
        #expect(taps.observerCount == 0 && name.observerCount == 0)
    }

    @Test func withLatestFromSignalDropsEventsBeforeItsFirstValue() {
        let taps = Relay<Int>()
        let other = Relay<String>()
        let collector = Collector(taps.signal.withLatestFrom(other.signal) { "\($0)\($1)" })
        taps.accept(1)
        other.accept("x")
        taps.accept(2)
        collector.dispose()
        #expect(collector.values == ["2x"])
        #expect(taps.observerCount == 0 && other.observerCount == 0)
    }

    @Test func scanAccumulatesAndRestartsOnReconnect() {
        let source = Relay<Int>()
        let sums = source.signal.scan(0, +)
        let first = Collector(sums)
        source.accept(1)
        source.accept(2)
        first.dispose()
        #expect(first.values == [1, 3])
        #expect(source.observerCount == 0)
        let second = Collector(sums)
        source.accept(5)
        #expect(second.values == [5])
        second.dispose()
    }

    @Test func startWithEmitsItsValuesFirst() {
        let source = Relay<Int>()
        let collector = Collector(source.signal.startWith(7, 8))
        source.accept(1)
        collector.dispose()
        source.accept(2)
        #expect(collector.values == [7, 8, 1])
        #expect(source.observerCount == 0)
    }

    @Test func distinctUntilChangedDropsRepeats() {
        let source = Relay<Int>()
        let collector = Collector(source.signal.distinctUntilChanged())
        for value in [1, 1, 2, 2, 1] { source.accept(value) }
        collector.dispose()
        #expect(collector.values == [1, 2, 1])
        #expect(source.observerCount == 0)
    }

    @Test func flatMapLatestSwitchesToTheNewestInnerSignal() {
        let outer = Relay<String>()
        let inners = ["a": Relay<Int>(), "b": Relay<Int>()]
        let collector = Collector(outer.signal.flatMapLatest { key in inners[key]?.signal ?? .never })
        outer.accept("a")
        inners["a"]?.accept(1)
        outer.accept("b")
        inners["a"]?.accept(2)  // stale: "a" was replaced
        inners["b"]?.accept(3)
        collector.dispose()
        inners["b"]?.accept(4)
        #expect(collector.values == [1, 3])
        #expect(outer.observerCount == 0)
        #expect(inners["a"]?.observerCount == 0 && inners["b"]?.observerCount == 0)
    }

    @Test func justEmitsOnSubscribeAndNeverEmitsNothing() {
        let just = Collector(Signal.just(1, 2))
        let never = Collector(Signal<Int>.never)
        #expect(just.values == [1, 2])
        #expect(never.values.isEmpty)
    }

    @Test func signalsAreSharedSoWorkRunsOncePerEvent() {
        let source = Relay<Int>()
        var runs = 0
        let mapped = source.signal.map { value -> Int in
            runs += 1
            return value * 10
        }
        let first = Collector(mapped)
        let second = Collector(mapped)
        source.accept(1)
        #expect(runs == 1)
        #expect(first.values == [10] && second.values == [10])
        first.dispose()
        source.accept(2)
        #expect(runs == 2)
        second.dispose()
        #expect(source.observerCount == 0)
    }

    @Test func observerDisposedDuringAnEmissionIsNotCalledAgain() {
        let source = Relay<Int>()
        var late: Subscription?
        var lateValues: [Int] = []
        let early = source.signal.subscribe { _ in late?.dispose() }
        late = source.signal.subscribe { lateValues.append($0) }
        source.accept(1)
        #expect(lateValues.isEmpty)
        early.dispose()
    }
}
