import JSONPatch

/// A navigation a ViewModel asks for: emit routes in an Output signal and let the View bind them
/// with `page.route(_:)`.
///
/// The value a route carries (sent to the new page, or returned to the page below) is `Codable` and
/// becomes a ``JSONValue`` when the route is made, with `JSONValueEncoder`: what crosses from one page
/// to another is plain JSON, stored with the session's log like every other input, so a restarted
/// session can replay it. The receiving page decodes it with `context.sentValue(as:)` or
/// `context.callbacks(of:)`.
///
/// ```swift
/// let route = input.login.map { _ in Route.root(.main, sending: session) }
/// let done = input.save.map { _ in Route.back(returning: editedPerson) }
/// ```
///
/// A value JSON cannot hold (a NaN, an infinity, an integer beyond `Int` that a `Double` does not hold
/// exactly) is not sent: ``value`` is nil and ``valueEncodingFailure`` says why. A `push`, `present` or
/// `root` with such a value fails, as a page that cannot be bound does: the session stays as it was,
/// and the result's `navigationFailure` is a `binding_failed` error naming the value's path. A
/// `back(returning:)` with such a value still goes back, without a callback value.
public struct Route: Sendable {
    /// The navigation to perform.
    public let kind: NavigationKind
    /// The target of `push`, `present` and `root`; nil for `back`.
    public let unit: UnitCase?
    /// For `push`/`present`/`root`: the value sent to the new page's ViewModel
    /// (`context.sentValue(as:)`); for `back`: the callback value for the page below
    /// (`context.callbacks(of:)`). Nil when the route carries no value.
    public let value: JSONValue?
    /// Route parameters of the new page.
    public let parameters: [String: String]
    /// Why the value given to the route could not be encoded as JSON; nil when it was (or there was none).
    public let valueEncodingFailure: JSONValueCodingError?

    private init(
        kind: NavigationKind, unit: UnitCase?, value: JSONValue?, parameters: [String: String],
        valueEncodingFailure: JSONValueCodingError? = nil
    ) {
        self.kind = kind
        self.unit = unit
        self.value = value
        self.parameters = parameters
        self.valueEncodingFailure = valueEncodingFailure
    }

    /// A `push`, `present` or `root` route carrying `value` encoded; if it does not encode, the route
    /// goes to a copy of `unit` whose binding fails with the encoding error.
    private init(kind: NavigationKind, unit: UnitCase, encoding value: some Encodable, parameters: [String: String]) {
        do throws(JSONValueCodingError) {
            self.init(kind: kind, unit: unit, value: try JSONValueEncoder().encode(value), parameters: parameters)
        } catch {
            self.init(
                kind: kind, unit: unit.failingToBind(with: .unencodableValue(sentTo: unit.name, error)), value: nil,
                parameters: parameters, valueEncodingFailure: error)
        }
    }

    /// Binds a fresh page of `unit` on top of the stack.
    /// - Parameters:
    ///   - unit: the page to show.
    ///   - parameters: its route parameters.
    public static func push(_ unit: UnitCase, parameters: [String: String] = [:]) -> Route {
        Route(kind: .push, unit: unit, value: nil, parameters: parameters)
    }

    /// Binds a fresh page of `unit` on top of the stack and sends it `value`.
    /// - Parameters:
    ///   - unit: the page to show.
    ///   - value: sent to its ViewModel, which reads it with `context.sentValue(as:)`.
    ///   - parameters: its route parameters.
    public static func push(
        _ unit: UnitCase, sending value: some Encodable & Sendable, parameters: [String: String] = [:]
    ) -> Route {
        Route(kind: .push, unit: unit, encoding: value, parameters: parameters)
    }

    /// Like `push`, but marks the new top page as presented (modal).
    /// - Parameters:
    ///   - unit: the page to show.
    ///   - parameters: its route parameters.
    public static func present(_ unit: UnitCase, parameters: [String: String] = [:]) -> Route {
        Route(kind: .present, unit: unit, value: nil, parameters: parameters)
    }

    /// Like `push`, but marks the new top page as presented (modal).
    /// - Parameters:
    ///   - unit: the page to show.
    ///   - value: sent to its ViewModel, which reads it with `context.sentValue(as:)`.
    ///   - parameters: its route parameters.
    public static func present(
        _ unit: UnitCase, sending value: some Encodable & Sendable, parameters: [String: String] = [:]
    ) -> Route {
        Route(kind: .present, unit: unit, encoding: value, parameters: parameters)
    }

    /// Releases every page of the session and binds a fresh page of `unit` as the only one.
    /// - Parameters:
    ///   - unit: the page to show.
    ///   - parameters: its route parameters.
    public static func root(_ unit: UnitCase, parameters: [String: String] = [:]) -> Route {
        Route(kind: .root, unit: unit, value: nil, parameters: parameters)
    }

    /// Releases every page of the session and binds a fresh page of `unit` as the only one, sending it `value`.
    /// - Parameters:
    ///   - unit: the page to show.
    ///   - value: sent to its ViewModel, which reads it with `context.sentValue(as:)`.
    ///   - parameters: its route parameters.
    public static func root(
        _ unit: UnitCase, sending value: some Encodable & Sendable, parameters: [String: String] = [:]
    ) -> Route {
        Route(kind: .root, unit: unit, encoding: value, parameters: parameters)
    }

    /// Pops the top page (the one emitting) without a callback value.
    public static var back: Route { Route(kind: .back, unit: nil, value: nil, parameters: [:]) }

    /// Pops the top page and delivers `value` to the page below it.
    ///
    /// If `value` does not encode as JSON, the page still goes back, without a callback value
    /// (``valueEncodingFailure`` says why).
    /// - Parameter value: the callback value, read with `context.callbacks(of:)` below.
    public static func back(returning value: some Encodable & Sendable) -> Route {
        do throws(JSONValueCodingError) {
            return Route(kind: .back, unit: nil, value: try JSONValueEncoder().encode(value), parameters: [:])
        } catch {
            return Route(kind: .back, unit: nil, value: nil, parameters: [:], valueEncodingFailure: error)
        }
    }
}
