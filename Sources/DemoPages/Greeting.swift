import JSONPatch
import MVVMR

// The greeting page of the seed article: "Say hello to who?" until `showGreeting`, then
// "Hello David Blaine". The person comes from the Model layer.
//
// View: {"person": {"firstName": "David", "lastName": "Blaine"}, "greeting": "Say hello to who?"}

/// The greeting page's events.
struct GreetingInput {
    /// The user asks for the greeting.
    let showGreeting: Signal<Void>
}

/// What the greeting page shows.
struct GreetingOutput {
    /// The person to greet.
    let person: Driver<Person>
    /// The greeting line.
    let greeting: Driver<String>
}

/// Declares `showGreeting` and writes `/person` and `/greeting`.
struct GreetingView: View {
    func input(from actions: Actions) -> GreetingInput {
        GreetingInput(showGreeting: actions.signal("showGreeting"))
    }

    func bind(_ output: GreetingOutput, to page: Page) {
        page.bind(output.person, at: "/person") { person in
            ["firstName": .string(person.firstName), "lastName": .string(person.lastName)]
        }
        page.bind(output.greeting, at: "/greeting")
    }
}

/// Greets the `Person` service's person when asked. Restorable: its saved state is whether it has greeted.
final class GreetingViewModel: RestorableViewModel {
    /// The line shown before the user asks.
    static let question = "Say hello to who?"

    private let person: Person
    /// Whether the user asked for the greeting.
    private let greeted: LatestState<Bool>

    init(context: UnitContext) throws {
        person = try context.services.require(Person.self)
        greeted = LatestState(false)
    }

    init(context: UnitContext, restoring greeted: Bool) throws {
        person = try context.services.require(Person.self)
        self.greeted = LatestState(greeted)
    }

    /// Whether it has greeted.
    var savedState: Bool? { greeted.value }

    func transform(_ input: GreetingInput) -> GreetingOutput {
        let person = self.person
        let greeted = self.greeted
        let greeting = input.showGreeting
            .map { () -> String in
                greeted.value = true
                return "Hello \(person.fullName)"
            }
            .asDriver(startingWith: greeted.value ? "Hello \(person.fullName)" : Self.question)
        return GreetingOutput(person: .just(person), greeting: greeting)
    }
}

extension UnitCase {
    /// The greeting page: `showGreeting`.
    public static let greeting = UnitCase("greeting", view: GreetingView.self, viewModel: GreetingViewModel.self)
}
