import Foundation
import MVVMR
import Synchronization

// The units the client's tests drive, served by a real in-process PageServer.

/// Counts the actions the counter page received (deliveries, not requests), from every session's thread.
/// An atomic, not a `Mutex`: ThreadSanitizer, which the store race tests run under, cannot see a `Mutex`'s lock
/// and reports the count it guards as a race.
final class DeliveryCounter: Sendable {
    private let count = Atomic(0)
    var value: Int { count.load(ordering: .sequentiallyConsistent) }
    func record() { count.add(1, ordering: .sequentiallyConsistent) }
}

// MARK: - counter: actions with and without values; deliveries counted in a service.

struct CounterInput {
    let increment: Signal<Void>
    let add: Signal<Int>
}

struct CounterOutput { let count: Driver<Int> }

struct CounterView: View {
    func input(from actions: Actions<NamedAction>) -> CounterInput {
        CounterInput(increment: actions.signal("increment"), add: actions.signal("add", of: Int.self))
    }
    func bind(_ output: CounterOutput, to page: Page) { page.bind(output.count, at: "/count") }
}

final class CounterViewModel: ViewModel {
    private let deliveries: DeliveryCounter?
    init(context: UnitContext) { deliveries = context.services[DeliveryCounter.self] }
    func transform(_ input: CounterInput) -> CounterOutput {
        let deliveries = self.deliveries
        let steps = Signal.merge(input.increment.map { 1 }, input.add).map { step -> Int in
            deliveries?.record()
            return step
        }
        return CounterOutput(count: steps.scan(0) { $0 + $1 }.asDriver(startingWith: 0))
    }
}

// MARK: - home → editor: push with a sent value, back with a callback value.

struct HomeInput { let edit: Signal<Void> }
struct HomeOutput {
    let user: Driver<String>
    let route: Signal<Route>
}

struct HomeView: View {
    func input(from actions: Actions<NamedAction>) -> HomeInput { HomeInput(edit: actions.signal("edit")) }
    func bind(_ output: HomeOutput, to page: Page) {
        page.bind(output.user, at: "/user")
        page.route(output.route)
    }
}

final class HomeViewModel: ViewModel {
    private let callbacks: Signal<String>
    init(context: UnitContext) { callbacks = context.callbacks(of: String.self) }
    func transform(_ input: HomeInput) -> HomeOutput {
        let user = callbacks.asDriver(startingWith: "nobody")
        return HomeOutput(user: user, route: input.edit.withLatestFrom(user).map { Route.push(.editor, sending: $0) })
    }
}

struct EditorInput {
    let save: Signal<String>
    let cancel: Signal<Void>
}
struct EditorOutput {
    let original: Driver<String>
    let route: Signal<Route>
}

struct EditorView: View {
    func input(from actions: Actions<NamedAction>) -> EditorInput {
        EditorInput(save: actions.signal("save", of: String.self), cancel: actions.signal("cancel"))
    }
    func bind(_ output: EditorOutput, to page: Page) {
        page.bind(output.original, at: "/original")
        page.route(output.route)
    }
}

final class EditorViewModel: ViewModel {
    private let original: String
    init(context: UnitContext) { original = context.sentValue(as: String.self) ?? "" }
    func transform(_ input: EditorInput) -> EditorOutput {
        EditorOutput(
            original: .just(original),
            route: Signal.merge(input.save.map { Route.back(returning: $0) }, input.cancel.map { Route.back }))
    }
}

// MARK: - forecast: an async Model call whose result arrives only over SSE.

struct ForecastInput { let refresh: Signal<Void> }
struct ForecastOutput { let forecast: Driver<String> }

struct ForecastView: View {
    func input(from actions: Actions<NamedAction>) -> ForecastInput { ForecastInput(refresh: actions.signal("refresh")) }
    func bind(_ output: ForecastOutput, to page: Page) { page.bind(output.forecast, at: "/forecast") }
}

/// Counts the forecast service's calls (one per refresh that ran, never one per replay).
final class ForecastCalls: Sendable {
    private let count = Atomic(0)  // not a Mutex, for ThreadSanitizer (see DeliveryCounter)
    var value: Int { count.load(ordering: .sequentiallyConsistent) }
    func record() { count.add(1, ordering: .sequentiallyConsistent) }
}

final class ForecastViewModel: ViewModel {
    private let scheduler: Scheduler
    private let calls: ForecastCalls?
    init(context: UnitContext) {
        scheduler = context.scheduler
        calls = try? context.services.require(ForecastCalls.self)
    }
    func transform(_ input: ForecastInput) -> ForecastOutput {
        let scheduler = self.scheduler
        let calls = self.calls
        let forecast = input.refresh.flatMapLatest { _ in
            scheduler.perform { () async -> String in
                calls?.record()
                try? await Task.sleep(nanoseconds: 200_000_000)
                return "sunny"
            }
        }
        return ForecastOutput(forecast: forecast.asDriver(startingWith: "unknown"))
    }
}

// MARK: - ticker: a timer; 40 ticks, 50 ms apart, then still.

struct TickerOutput { let ticks: Driver<Int> }

struct TickerView: View {
    func bind(_ output: TickerOutput, to page: Page) { page.bind(output.ticks, at: "/ticks") }
}

final class TickerViewModel: ViewModel {
    static let lastTick = 40
    private let scheduler: Scheduler
    init(context: UnitContext) { scheduler = context.scheduler }
    func transform(_ input: NoInput) -> TickerOutput {
        TickerOutput(
            ticks: scheduler.interval(.milliseconds(50)).filter { $0 < Self.lastTick }.map { $0 + 1 }.asDriver(startingWith: 0))
    }
}

extension UnitCase {
    static let counter = UnitCase("counter", view: CounterView.self, viewModel: CounterViewModel.self)
    static let home = UnitCase("home", view: HomeView.self, viewModel: HomeViewModel.self)
    static let editor = UnitCase("editor", view: EditorView.self, viewModel: EditorViewModel.self)
    static let forecast = UnitCase("forecast", view: ForecastView.self, viewModel: ForecastViewModel.self)
    static let ticker = UnitCase("ticker", view: TickerView.self, viewModel: TickerViewModel.self)
}
