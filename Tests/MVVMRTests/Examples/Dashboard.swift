import MVVMR

// Composition: a dashboard made of a ticking clock part and a quote part with its own action.

struct ClockOutput { let seconds: Driver<Int> }

struct ClockView: View {
    func bind(_ output: ClockOutput, to page: Page) { page.bind(output.seconds, at: "/seconds") }
}

final class ClockViewModel: ViewModel {
    private let scheduler: Scheduler
    init(context: UnitContext) { scheduler = context.scheduler }
    func transform(_ input: NoInput) -> ClockOutput {
        ClockOutput(seconds: scheduler.interval(.seconds(1)).map { $0 + 1 }.asDriver(startingWith: 0))
    }
}

struct QuoteInput { let shuffle: Signal<Void> }
struct QuoteOutput { let quote: Driver<String> }

enum QuoteAction: String, PageAction { case shuffle }

struct QuoteView: View {
    func input(from actions: Actions<QuoteAction>) -> QuoteInput { QuoteInput(shuffle: actions.signal(.shuffle)) }
    func bind(_ output: QuoteOutput, to page: Page) { page.bind(output.quote, at: "/text") }
}

final class QuoteViewModel: ViewModel {
    static let quotes = ["Stay hungry.", "Less is more.", "Ship it."]
    init(context: UnitContext) {}
    func transform(_ input: QuoteInput) -> QuoteOutput {
        QuoteOutput(
            quote: input.shuffle.scan(0) { index, _ in (index + 1) % Self.quotes.count }
                .map { Self.quotes[$0] }
                .asDriver(startingWith: Self.quotes[0]))
    }
}

struct DashboardInput { let refresh: Signal<Void> }
struct DashboardOutput { let title: Driver<String> }

struct DashboardView: View {
    func input(from actions: Actions<NamedAction>) -> DashboardInput { DashboardInput(refresh: actions.signal("refresh")) }
    func bind(_ output: DashboardOutput, to page: Page) { page.bind(output.title, at: "/title") }
}

final class DashboardViewModel: ViewModel {
    init(context: UnitContext) {}
    func transform(_ input: DashboardInput) -> DashboardOutput {
        DashboardOutput(title: input.refresh.scan(0) { count, _ in count + 1 }.map { "Dashboard (\($0))" }
            .asDriver(startingWith: "Dashboard"))
    }
}

extension UnitCase {
    static let clock = UnitCase("clock", view: ClockView.self, viewModel: ClockViewModel.self)
    static let quote = UnitCase("quote", view: QuoteView.self, viewModel: QuoteViewModel.self)
    static let dashboard = UnitCase(
        "dashboard", view: DashboardView.self, viewModel: DashboardViewModel.self,
        parts: [UnitPart("clock", .clock), UnitPart("quote", .quote)])
}
