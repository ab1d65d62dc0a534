import JSONPatch
import MVVMR

// Small pages used to test the tester itself.

struct Counter2Input {
    let increment: Signal<Void>
    let load: Signal<Void>
    let next: Signal<Void>
}

struct Counter2Output {
    let count: Driver<Int>
    let loaded: Driver<String>
    let seconds: Driver<Int>
    let route: Signal<Route>
}

struct TallyView: View {
    func input(from actions: Actions<NamedAction>) -> Counter2Input {
        Counter2Input(increment: actions.signal("increment"), load: actions.signal("load"), next: actions.signal("next"))
    }

    func bind(_ output: Counter2Output, to page: Page) {
        page.bind(output.count, at: "/count")
        page.bind(output.loaded, at: "/loaded")
        page.bind(output.seconds, at: "/seconds")
        page.route(output.route)
    }
}

final class TallyViewModel: ViewModel {
    private let scheduler: Scheduler
    private let start: Int

    init(context: UnitContext) {
        scheduler = context.scheduler
        start = context.sentValue(as: Int.self) ?? 0
    }

    func transform(_ input: Counter2Input) -> Counter2Output {
        Counter2Output(
            count: input.increment.scan(start) { count, _ in count + 1 }.asDriver(startingWith: start),
            loaded: input.load.flatMapLatest(on: scheduler) { _ in "loaded" }.asDriver(startingWith: "idle"),
            seconds: scheduler.interval(.seconds(1)).map { $0 + 1 }.asDriver(startingWith: 0),
            route: input.next.map { Route.push(.other) })
    }
}

struct OtherView: View {}
final class OtherViewModel: ViewModel {
    init(context: UnitContext) {}
}

extension UnitCase {
    static let tally = UnitCase("tally", view: TallyView.self, viewModel: TallyViewModel.self)
    static let other = UnitCase("other", view: OtherView.self, viewModel: OtherViewModel.self)
}

// A page that publishes each `say` on the `notes` topic and shows the last note the topic brought.
struct NotesInput {
    let say: Signal<String>
}

struct NotesOutput {
    let last: Driver<String>
    let said: Signal<String>
}

struct NotesView: View {
    func input(from actions: Actions<NamedAction>) -> NotesInput { NotesInput(say: actions.signal("say", of: String.self)) }

    func bind(_ output: NotesOutput, to page: Page) {
        page.bind(output.last, at: "/last")
        page.publish(output.said, on: .notes)
    }
}

final class NotesViewModel: ViewModel {
    private let notes: Signal<String>
    init(context: UnitContext) { notes = context.messages(on: .notes) }

    func transform(_ input: NotesInput) -> NotesOutput {
        NotesOutput(last: notes.asDriver(startingWith: ""), said: input.say)
    }
}

extension Topic where Value == String {
    static var notes: Topic<String> { Topic("notes") }
}

extension UnitCase {
    static let notes = UnitCase("notes", view: NotesView.self, viewModel: NotesViewModel.self)
}
