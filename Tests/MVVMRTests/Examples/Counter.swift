import JSONPatch
import MVVMR

// A page with several action types and outputs; it also counts its ViewModel and stream closures.

struct CounterInput {
    let increment: Signal<Void>
    let add: Signal<Int>
    let rename: Signal<String>
    let scale: Signal<Double>
    let flag: Signal<Bool>
    let noop: Signal<Void>
}

struct CounterOutput {
    let count: Driver<Int>
    let name: Driver<String>
    let flag: Driver<Bool>
}

struct CounterView: View {
    func input(from actions: Actions<NamedAction>) -> CounterInput {
        CounterInput(
            increment: actions.signal("increment"),
            add: actions.signal("add", of: Int.self),
            rename: actions.signal("rename", of: String.self),
            scale: actions.signal("scale", of: Double.self),
            flag: actions.signal("flag", of: Bool.self),
            noop: actions.signal("noop"))
    }

    func bind(_ output: CounterOutput, to page: Page) {
        page.bind(output.count, at: "/count")
        // The same driver bound twice: its work must run once per change.
        page.bind(output.count, at: "/stats/count")
        page.bind(output.name, at: "/name")
        page.bind(output.flag, at: "/flag")
    }
}

final class CounterViewModel: ViewModel {
    private let token: LifeToken?

    init(context: UnitContext) {
        token = context.services[LifeCounter.self].map(LifeToken.init)
    }

    func transform(_ input: CounterInput) -> CounterOutput {
        let token = self.token
        let steps = Signal.merge(
            input.increment.map { 1 }, input.add, input.scale.map { Int($0) },
            input.noop.map { 0 })
        let count = steps.scan(0) { total, step in
            _ = token  // a stream closure holding the token: freed only if the graph is freed
            return total + step
        }
        .asDriver(startingWith: 0)
        return CounterOutput(
            count: count,
            name: input.rename.asDriver(startingWith: "counter"),
            flag: input.flag.asDriver(startingWith: false))
    }

    deinit {}
}

extension UnitCase {
    static let counter = UnitCase("counter", view: CounterView.self, viewModel: CounterViewModel.self)
}
