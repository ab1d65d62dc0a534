/// The actions a View declares, as a type: usually an enum of `String` raw values, one case per action.
///
/// A View names its action type in `input(from actions: Actions<CountersAction>)`, and every declaration
/// and every test sends a case of it, so a misspelled action does not compile:
///
/// ```swift
/// enum CountersAction: String, PageAction { case increment, loadMore }
///
/// struct CountersView: View {
///     func input(from actions: Actions<CountersAction>) -> CountersInput {
///         CountersInput(increment: actions.signal(.increment, of: Int.self), loadMore: actions.signal(.loadMore))
///     }
/// }
/// // tester.send(CountersAction.increment, 3)
/// ```
///
/// Every case must be declared by the View's `input(from:)`: a case it leaves out is reported when the app
/// starts (``UnitRegistry/problems``), naming the unit.
public protocol PageAction: Hashable, Sendable, CaseIterable {
    /// The action's name on the wire, as clients POST it.
    var actionName: String { get }
}

extension PageAction where Self: RawRepresentable, RawValue == String {
    /// The case's raw value.
    public var actionName: String { rawValue }
}

/// The action type of a View that declares no action.
public enum NoAction: PageAction {
    /// A `NoAction` has no case, so it has no name.
    public var actionName: String {
        switch self {}
    }
}

/// An action named by a string, for Views that build their action names at run time (tests of the protocol
/// itself, generated pages). Prefer an enum: a misspelled `NamedAction` compiles.
public struct NamedAction: PageAction, ExpressibleByStringLiteral, CustomStringConvertible {
    /// No case is known in advance: the start-up check of undeclared cases does not apply.
    public static var allCases: [NamedAction] { [] }

    /// The action's name on the wire.
    public let actionName: String

    /// An action named `name`.
    /// - Parameter name: the action's name on the wire.
    public init(_ name: String) {
        actionName = name
    }

    /// An action named by a string literal: `actions.signal("increment")`.
    /// - Parameter value: the action's name on the wire.
    public init(stringLiteral value: String) {
        actionName = value
    }

    /// The action's name.
    public var description: String { actionName }
}
