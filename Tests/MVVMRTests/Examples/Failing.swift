import MVVMR

// ViewModels and Views that fail to bind, without trapping.

struct ModelUnavailable: Error {}

final class ThrowingViewModel: ViewModel {
    init(context: UnitContext) throws { throw ModelUnavailable() }
}

struct PlainView: View {}

struct BadPathOutput { let value: Driver<Int> }
struct BadPathView: View {
    func bind(_ output: BadPathOutput, to page: Page) { page.bind(output.value, at: "no-slash") }
}
final class BadPathViewModel: ViewModel {
    init(context: UnitContext) {}
    func transform(_ input: NoInput) -> BadPathOutput { BadPathOutput(value: .just(1)) }
}

struct NeedsServiceView: View {}
final class NeedsServiceViewModel: ViewModel {
    init(context: UnitContext) throws { _ = try context.services.require(Person.self) }
}

extension UnitCase {
    static let throwing = UnitCase("throwing", view: PlainView.self, viewModel: ThrowingViewModel.self)
    static let badPath = UnitCase("badPath", view: BadPathView.self, viewModel: BadPathViewModel.self)
    static let needsService = UnitCase("needsService", view: NeedsServiceView.self, viewModel: NeedsServiceViewModel.self)
}

// Compile-time pairing: the line below does not compile, because GreetingView's Input
// (GreetingInput) is not LoginViewModel's Input (LoginInput):
//
//     UnitCase("broken", view: GreetingView.self, viewModel: LoginViewModel.self)
//     // error: initializer 'init(_:view:viewModel:parts:)' requires the types 'GreetingInput' and
//     //        'LoginInput' be equivalent
