/// The ViewModel layer of a page: business logic only, `transform(Input) -> Output`.
///
/// It knows nothing of HTTP or JSON. It reaches the Model layer through the services of its
/// `UnitContext`, and receives the value a router sent it, the route parameters and the scheduler
/// there too. A fresh ViewModel is made for every bound page; it lives as long as the page.
/// Throwing from `init(context:)` or `transform(_:)` fails the binding with an error result; the
/// session lives on.
///
/// ```swift
/// final class GreetingViewModel: ViewModel {
///     private let person: Person
///     init(context: UnitContext) throws { person = try context.services.require(Person.self) }
///     func transform(_ input: GreetingInput) -> GreetingOutput {
///         GreetingOutput(greeting: input.showGreeting
///             .map { [person] in "Hello \(person.firstName) \(person.lastName)" }
///             .asDriver(startingWith: "Say hello to who?"))
///     }
/// }
/// ```
///
/// Only the metatype is `Sendable` (`SendableMetatype`): a `UnitCase`, shared by every session,
/// captures it to make pairs; the instances stay inside one session and need no `Sendable`.
public protocol ViewModel: SendableMetatype {
    /// The streams it receives from its View; `NoInput` when the View has no actions.
    associatedtype Input = NoInput
    /// The streams it hands to its View; `NoOutput` when it emits nothing.
    associatedtype Output = NoOutput

    /// Makes the ViewModel for one page of one session.
    /// - Parameter context: services, route parameters, the value sent by the router, the scheduler.
    init(context: UnitContext) throws

    /// Turns the Input streams into the Output streams; called once per bound page.
    /// - Parameter input: the streams the View made from the page's actions.
    func transform(_ input: Input) throws -> Output
}

extension ViewModel where Input == NoInput, Output == NoOutput {
    /// A ViewModel with neither Input nor Output has nothing to transform.
    public func transform(_ input: NoInput) -> NoOutput { NoOutput() }
}
