import MVVMR

// The greeting page of the seed articles, bound path by path (the session tests use it; docs/GUIDE.md shows the
// todo page instead).

struct Person: Sendable {
    let firstName: String
    let lastName: String
}

struct GreetingInput {
    let showGreeting: Signal<Void>
}

struct GreetingOutput {
    let greeting: Driver<String>
}

struct GreetingView: View {
    func input(from actions: Actions<NamedAction>) -> GreetingInput {
        GreetingInput(showGreeting: actions.signal("showGreeting"))
    }

    func bind(_ output: GreetingOutput, to page: Page) {
        page.bind(output.greeting, at: "/greeting")
    }
}

final class GreetingViewModel: ViewModel {
    private let person: Person

    init(context: UnitContext) throws {
        person = try context.services.require(Person.self)
    }

    func transform(_ input: GreetingInput) -> GreetingOutput {
        let person = self.person
        let greeting = input.showGreeting
            .map { "Hello \(person.firstName) \(person.lastName)" }
            .asDriver(startingWith: "Say hello to who?")
        return GreetingOutput(greeting: greeting)
    }
}

extension UnitCase {
    static let greeting = UnitCase("greeting", view: GreetingView.self, viewModel: GreetingViewModel.self)
}
