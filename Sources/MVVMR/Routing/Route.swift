/// A navigation a ViewModel asks for: emit routes in an Output signal and let the View bind them
/// with `page.route(_:)`.
///
/// ```swift
/// let route = input.login.map { _ in Route.root(.main, sending: session) }
/// let done = input.save.map { _ in Route.back(returning: editedPerson) }
/// ```
public struct Route {
    /// The navigation to perform.
    public let kind: NavigationKind
    /// The target of `push`, `present` and `root`; nil for `back`.
    public let unit: UnitCase?
    /// For `push`/`present`/`root`: the value sent to the new page's ViewModel
    /// (`context.sentValue(as:)`); for `back`: the callback value for the page below
    /// (`context.callbacks(of:)`).
    public let value: Any?
    /// Route parameters of the new page.
    public let parameters: [String: String]

    private init(kind: NavigationKind, unit: UnitCase?, value: Any?, parameters: [String: String]) {
        self.kind = kind
        self.unit = unit
        self.value = value
        self.parameters = parameters
    }

    /// Binds a fresh page of `unit` on top of the stack.
    /// - Parameters:
    ///   - unit: the page to show.
    ///   - value: sent to its ViewModel.
    ///   - parameters: its route parameters.
    public static func push(_ unit: UnitCase, sending value: Any? = nil, parameters: [String: String] = [:]) -> Route {
        Route(kind: .push, unit: unit, value: value, parameters: parameters)
    }

    /// Like `push`, but marks the new top page as presented (modal).
    /// - Parameters:
    ///   - unit: the page to show.
    ///   - value: sent to its ViewModel.
    ///   - parameters: its route parameters.
    public static func present(_ unit: UnitCase, sending value: Any? = nil, parameters: [String: String] = [:])
        -> Route
    {
        Route(kind: .present, unit: unit, value: value, parameters: parameters)
    }

    /// Releases every page of the session and binds a fresh page of `unit` as the only one.
    /// - Parameters:
    ///   - unit: the page to show.
    ///   - value: sent to its ViewModel.
    ///   - parameters: its route parameters.
    public static func root(_ unit: UnitCase, sending value: Any? = nil, parameters: [String: String] = [:]) -> Route {
        Route(kind: .root, unit: unit, value: value, parameters: parameters)
    }

    /// Pops the top page (the one emitting) without a callback value.
    public static var back: Route { Route(kind: .back, unit: nil, value: nil, parameters: [:]) }

    /// Pops the top page and delivers `value` to the page below it.
    /// - Parameter value: the callback value, read with `context.callbacks(of:)` below.
    public static func back(returning value: Any) -> Route {
        Route(kind: .back, unit: nil, value: value, parameters: [:])
    }
}
