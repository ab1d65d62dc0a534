import MVVMR
import Synchronization

/// Counts live ViewModels and stream-owning objects of one test, through the services.
final class LifeCounter: Sendable {
    private let count = Mutex(0)
    var live: Int { count.withLock { $0 } }
    func born() { count.withLock { $0 += 1 } }
    func died() { count.withLock { $0 -= 1 } }
}

/// A token whose deinit tells the counter: captured by stream closures to prove they are freed.
final class LifeToken {
    let counter: LifeCounter
    init(_ counter: LifeCounter) {
        self.counter = counter
        counter.born()
    }
    deinit { counter.died() }
}
