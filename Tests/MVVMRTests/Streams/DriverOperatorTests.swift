@testable import MVVMR
import Testing

@Suite struct DriverOperatorTests {
    @Test func asDriverStartsWithItsValueThenFollowsTheSignal() {
        let source = Relay<String>()
        let collector = Collector(source.signal.asDriver(startingWith: "start"))
        source.accept("next")
        collector.dispose()
        source.accept("late")
        #expect(collector.values == ["start", "next"])
        #expect(source.observerCount == 0)
    }

    @Test func secondSubscriberGetsTheCurrentValue() {
        let source = Relay<Int>()
        let driver = source.signal.asDriver(startingWith: 0)
        let first = Collector(driver)
        source.accept(5)
        let second = Collector(driver)
        #expect(second.values == [5])
        first.dispose()
        second.dispose()
        #expect(source.observerCount == 0)
    }

    @Test func mapRunsOnceForTwoSubscribers() {
        let relay = DriverRelay(1)
        var runs = 0
        let doubled = relay.driver.map { value -> Int in
            runs += 1
            return value * 2
        }
        let first = Collector(doubled)
        let second = Collector(doubled)
        relay.accept(2)
        #expect(first.values == [2, 4] && second.values == [2, 4])
        #expect(runs == 2)
        first.dispose()
        second.dispose()
        #expect(relay.observerCount == 0)
    }

    @Test func distinctUntilChangedKeepsTheFirstValue() {
        let relay = DriverRelay(1)
        let collector = Collector(relay.driver.distinctUntilChanged())
        relay.accept(1)
        relay.accept(2)
        relay.accept(2)
        collector.dispose()
        #expect(collector.values == [1, 2])
        #expect(relay.observerCount == 0)
    }

    @Test func combineLatestEmitsTheInitialPairOnceThenEachChange() {
        let first = DriverRelay(1)
        let second = DriverRelay("a")
        let collector = Collector(Driver.combineLatest(first.driver, second.driver).map { "\($0)\($1)" })
        first.accept(2)
        second.accept("b")
        collector.dispose()
        first.accept(3)
        #expect(collector.values == ["1a", "2a", "2b"])
        #expect(first.observerCount == 0 && second.observerCount == 0)
    }

    @Test func combineLatestOfThreeAndOfAnArray() {
        let first = DriverRelay(1)
        let second = DriverRelay(2)
        let third = DriverRelay(3)
        let triple = Collector(Driver.combineLatest(first.driver, second.driver, third.driver).map { $0 + $1 + $2 })
        let array = Collector(Driver.combineLatest([first.driver, second.driver, third.driver]))
        third.accept(10)
        triple.dispose()
        array.dispose()
        #expect(triple.values == [6, 13])
        #expect(array.values == [[1, 2, 3], [1, 2, 10]])
        #expect(first.observerCount == 0 && third.observerCount == 0)
        #expect(Collector(Driver<[Int]>.combineLatest([])).values == [[]])
    }

    @Test func flatMapLatestFollowsTheNewestInnerDriver() {
        let selection = DriverRelay("a")
        let inners = ["a": DriverRelay(1), "b": DriverRelay(10)]
        let collector = Collector(selection.driver.flatMapLatest { inners[$0]?.driver ?? .just(0) })
        inners["a"]?.accept(2)
        selection.accept("b")
        inners["a"]?.accept(3)  // stale
        inners["b"]?.accept(11)
        collector.dispose()
        #expect(collector.values == [1, 2, 10, 11])
        #expect(selection.observerCount == 0)
        #expect(inners["a"]?.observerCount == 0 && inners["b"]?.observerCount == 0)
    }

    @Test func changesSkipTheCurrentValue() {
        let relay = DriverRelay(1)
        let collector = Collector(relay.driver.changes)
        relay.accept(2)
        collector.dispose()
        relay.accept(3)
        #expect(collector.values == [2])
        #expect(relay.observerCount == 0)
    }

    @Test func justHoldsItsValue() {
        #expect(Collector(Driver.just("x")).values == ["x"])
    }

    @Test func signalFlatMapLatestIntoDrivers() {
        let taps = Relay<Int>()
        let collector = Collector(taps.signal.flatMapLatest { Driver.just($0 * 3) })
        taps.accept(1)
        taps.accept(2)
        collector.dispose()
        #expect(collector.values == [3, 6])
        #expect(taps.observerCount == 0)
    }
}
