@testable import MVVMR
import Testing

@Suite struct SourceTests {
    @Test func relayEmitsOnlyToCurrentObservers() {
        let relay = Relay<Int>()
        relay.accept(0)
        let collector = Collector(relay.signal)
        relay.accept(1)
        collector.dispose()
        relay.accept(2)
        #expect(collector.values == [1])
        #expect(relay.observerCount == 0)
    }

    @Test func driverRelayKeepsItsValueAcrossSubscribers() {
        let relay = DriverRelay("a")
        relay.accept("b")
        #expect(relay.value == "b")
        let first = Collector(relay.driver)
        first.dispose()
        let second = Collector(relay.driver)
        relay.accept("c")
        second.dispose()
        #expect(first.values == ["b"])
        #expect(second.values == ["b", "c"])
        #expect(relay.observerCount == 0)
    }

    @Test func mapToVoidAndMergeWith() {
        let first = Relay<Int>()
        let second = Relay<Int>()
        let collector = Collector(first.signal.merge(with: second.signal).mapToVoid())
        first.accept(1)
        second.accept(2)
        collector.dispose()
        #expect(collector.values.count == 2)
        #expect(first.observerCount == 0 && second.observerCount == 0)
    }

    @Test func subscriptionDisposesOnceAndBagDisposesAll() {
        var stops = 0
        let subscription = Subscription { stops += 1 }
        subscription.dispose()
        subscription.dispose()
        #expect(stops == 1)
        #expect(subscription.isDisposed)
        let bag = SubscriptionBag()
        Subscription { stops += 10 }.disposed(by: bag)
        Subscription { stops += 100 }.disposed(by: bag)
        #expect(bag.count == 2)
        bag.dispose()
        #expect(stops == 111)
        #expect(bag.count == 0)
    }
}
