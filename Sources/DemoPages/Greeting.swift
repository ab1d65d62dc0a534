import MVVMR

// The greeting page of the seed article: "Say hello to who?" until `showGreeting`, then
// "Hello David Blaine". The person comes from the Model layer.
//
// View: {"person": {"firstName": "David", "lastName": "Blaine"}, "greeting": "Say hello to who?"}

/// What the greeting page shows: the person and the greeting line.
struct GreetingState: Codable, Equatable, Sendable { var person: Person, greeting = "Say hello to who?" }

/// The greeting page's actions.
enum GreetingAction: String, PageAction { case showGreeting }

/// Declares `showGreeting`; the state is bound whole.
struct GreetingView: View {
    typealias Output = StateOutput<GreetingState>
    func input(from actions: Actions<GreetingAction>) -> Signal<Void> { actions.signal(.showGreeting) }
}

/// Greets the `Person` service's person when asked. Restorable: its saved state is what it shows.
final class GreetingViewModel: ReducerViewModel {
    let reducer: StateReducer<GreetingState, Void>
    init(context: UnitContext, state: GreetingState?) throws {
        reducer = StateReducer(try state ?? GreetingState(person: context.services.require(Person.self)))
    }

    func transform(_ showGreeting: Signal<Void>) -> StateOutput<GreetingState> {
        reducer.run(showGreeting) { state, _ in state.greeting = "Hello \(state.person.fullName)" }
    }
}

extension UnitCase {
    /// The greeting page: `showGreeting`.
    public static let greeting = UnitCase("greeting", view: GreetingView.self, viewModel: GreetingViewModel.self)
}
