/// The View layer of a page: turns the user's actions into the Input of its ViewModel, and binds the
/// ViewModel's Output to paths of the page's JSON document. No business logic, no HTML, no layout.
///
/// A fresh View is made for every bound page (`init()`), and also once, without a session, to list
/// the unit's actions for `GET /api/units`; so `input(from:)` only declares signals and has no side
/// effects.
///
/// ```swift
/// enum GreetingAction: String, PageAction { case showGreeting }
///
/// struct GreetingView: View {
///     func input(from actions: Actions<GreetingAction>) -> Signal<Void> { actions.signal(.showGreeting) }
///     // Output is a Driver of a Codable state (or a StateOutput): bound at the page's root, no bind(_:to:)
/// }
/// ```
///
/// A View whose Output is anything else binds it path by path in ``bind(_:to:)``.
///
/// Only the metatype is `Sendable` (`SendableMetatype`): a `UnitCase`, shared by every session,
/// captures it to make pairs; the instances stay inside one session and need no `Sendable`.
public protocol View: SendableMetatype {
    /// The actions it declares (see ``PageAction``); ``NoAction`` when it has none.
    associatedtype Action: PageAction = NoAction
    /// The streams this View hands to its ViewModel; `NoInput` when it has no actions.
    associatedtype Input = NoInput
    /// The streams this View binds to the page; `NoOutput` when the ViewModel emits nothing.
    associatedtype Output = NoOutput

    /// Makes a View; Views carry no state of their own.
    init()

    /// Declares the actions the View accepts and returns them as the ViewModel's Input.
    /// - Parameter actions: the page's actions; each `signal(_:)` call declares one of `Action`'s cases.
    func input(from actions: Actions<Action>) -> Input

    /// Binds the ViewModel's Output to paths of the page's document, and its routes to the router.
    /// - Parameters:
    ///   - output: what the ViewModel's `transform(_:)` returned.
    ///   - page: the page whose document the View writes.
    func bind(_ output: Output, to page: Page)
}

extension View where Input == NoInput {
    /// A View without actions gives its ViewModel `NoInput`.
    public func input(from actions: Actions<Action>) -> NoInput { NoInput() }
}

extension View where Output == NoOutput {
    /// A View whose ViewModel has no Output binds nothing.
    public func bind(_ output: NoOutput, to page: Page) {}
}

extension View where Output: PageOutput {
    /// A View whose Output is a whole state (a ``Driver`` of a `Codable` value, or a ``StateOutput``) binds it at
    /// the page's root (and its routes to the router).
    public func bind(_ output: Output, to page: Page) {
        output.bind(to: page)
    }
}

/// An Output that knows how to bind itself to a page: a ``Driver`` of an `Encodable & Equatable` state, or a
/// ``StateOutput``.
public protocol PageOutput {
    /// Binds the output at the root of `page` (a part's page: the part's mount path).
    /// - Parameter page: the page, or part, to write.
    func bind(to page: Page)
}

extension Driver: PageOutput where Element: Encodable & Equatable {
    /// Binds the state at the page's root: each member at its own path, written only when it changed.
    public func bind(to page: Page) {
        page.bind(self)
    }
}

/// The Input of a View that has no actions.
public struct NoInput: Sendable {
    /// The empty input.
    public init() {}
}

/// The Output of a ViewModel that emits nothing.
public struct NoOutput: Sendable {
    /// The empty output.
    public init() {}
}
