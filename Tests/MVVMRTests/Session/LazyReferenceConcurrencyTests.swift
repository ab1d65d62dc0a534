import Locking
import Testing

/// ``LazyReference``: one instance is stored however many threads race to store one, every reader sees that one, and
/// the instance is released with the reference (run under ThreadSanitizer by the concurrency stage).
@Suite struct LazyReferenceConcurrencyTests {
    /// What the test's boxes were: how many were made, and the numbers of those released.
    final class Tally: Sendable {
        let made = Locked(0)
        let released = Locked<[Int]>([])
    }

    final class Box: Sendable {
        let number: Int
        let tally: Tally
        init(_ number: Int, tally: Tally) {
            self.number = number
            self.tally = tally
            tally.made.withLock { $0 += 1 }
        }
        deinit { tally.released.withLock { $0.append(number) } }
    }

    final class Holder: Sendable {
        let reference = LazyReference<Box>()
    }

    @Test func racingStoresKeepOneInstanceAndEveryoneSeesIt() async {
        let tally = Tally()
        for _ in 0..<50 {
            let holder = Holder()
            #expect(holder.reference.load() == nil)
            let seen = await withTaskGroup(of: Int.self) { group in
                for number in 0..<8 {
                    group.addTask {
                        let stored = holder.reference.load() ?? holder.reference.storeIfNil(Box(number, tally: tally))
                        return stored.number
                    }
                }
                var numbers: Set<Int> = []
                for await number in group { numbers.insert(number) }
                return numbers
            }
            #expect(seen.count == 1)
            #expect(holder.reference.load()?.number == seen.first)
        }
        // Every instance that lost a race is gone already, and each stored one went with its holder.
        #expect(tally.released.withLock { $0.count } == tally.made.withLock { $0 })
    }

    @Test func anInstanceStoredIsReleasedWithTheReference() {
        let tally = Tally()
        do {
            let holder = Holder()
            let first = holder.reference.storeIfNil(Box(1, tally: tally))
            let second = holder.reference.storeIfNil(Box(2, tally: tally))
            #expect(first.number == 1 && second.number == 1)
            #expect(tally.released.withLock { $0 } == [2])
        }
        #expect(tally.released.withLock { $0.sorted() } == [1, 2])
    }
}
