import JSONPatch

/// What a ViewModel receives when its page is bound: services, route parameters, the value sent by
/// the router, callbacks from pages above, and the session's scheduler.
public struct UnitContext {
    /// The name of the unit being bound.
    public let unit: String
    /// The Model layer, injected at app start.
    public let services: Services
    /// Route parameters, from the query string of `GET /api/pages/{unit}` or from the route.
    public let parameters: [String: String]
    /// The session's clock and async runner: pass it to `debounce`, `throttle`, `interval`, `perform`.
    public let scheduler: Scheduler
    /// This page's random numbers, seeded from its session's log (the same on every replay). Outside a session
    /// (a ViewModel tested alone) it starts from seed 0.
    public internal(set) var random = SessionRandom(seed: 0)
    /// The value the router sent, as JSON; nil when it sent none.
    let sentValue: JSONValue?
    let callbackChannel: CallbackChannel
    /// The turn of the session, which holds its topic subscriptions (made on first use); nil outside a session
    /// (then ``messages(on:)`` never emits).
    var sessionTurn: SessionTurn?
    /// What the page's ViewModel shares with its parts' (one box for the page and all its parts).
    let sharedValues = SharedValues()

    /// A context for a ViewModel bound outside a session, for tests of a ViewModel alone.
    /// - Parameters:
    ///   - unit: the unit's name.
    ///   - services: the services the ViewModel reads.
    ///   - parameters: route parameters.
    ///   - scheduler: usually `Scheduler.virtual()`.
    ///   - sentValue: the value a router sent, as JSON, if any.
    public init(
        unit: String, services: Services = Services(), parameters: [String: String] = [:],
        scheduler: Scheduler, sentValue: JSONValue? = nil
    ) {
        self.init(
            unit: unit, services: services, parameters: parameters, scheduler: scheduler, sentValue: sentValue,
            callbackChannel: CallbackChannel())
    }

    /// A context for a ViewModel bound outside a session, with a value sent as a router sends it
    /// (`.push(.detail, sending: person)`), for tests of a ViewModel alone.
    /// - Parameters:
    ///   - unit: the unit's name.
    ///   - services: the services the ViewModel reads.
    ///   - parameters: route parameters.
    ///   - scheduler: usually `Scheduler.virtual()`.
    ///   - value: the value a router sent; it is encoded as JSON, as a route encodes it.
    /// - Throws: `JSONValueCodingError` if `value` cannot be encoded as JSON.
    public init(
        unit: String, services: Services = Services(), parameters: [String: String] = [:],
        scheduler: Scheduler, sending value: some Encodable & Sendable
    ) throws(JSONValueCodingError) {
        self.init(
            unit: unit, services: services, parameters: parameters, scheduler: scheduler,
            sentValue: try JSONValueEncoder().encode(value), callbackChannel: CallbackChannel())
    }

    init(
        unit: String, services: Services, parameters: [String: String], scheduler: Scheduler, sentValue: JSONValue?,
        callbackChannel: CallbackChannel
    ) {
        self.unit = unit
        self.services = services
        self.parameters = parameters
        self.scheduler = scheduler
        self.sentValue = sentValue
        self.callbackChannel = callbackChannel
    }

    /// The value the router sent to this page (`.push(.detail, sending: person)`), decoded as a `Value`;
    /// nil when it sent none, or one that does not decode as a `Value`.
    /// - Parameter type: the type expected.
    public func sentValue<Value: Decodable>(as type: Value.Type = Value.self) -> Value? {
        guard let sentValue else { return nil }
        return try? sentValue.decoded(as: type)
    }

    /// Hands `value` to the parts of this page: a part's ViewModel, made after the page's own, reads it with
    /// ``shared(_:)``. The page's ViewModel shares what its parts have in common (a stream, a service of the
    /// page's own), so that they meet without a global service.
    ///
    /// ```swift
    /// init(context: UnitContext) {                      // the dashboard's ViewModel
    ///     activity = DashboardActivity(scheduler: context.scheduler)
    ///     context.share(activity)
    /// }
    /// init(context: UnitContext) throws {               // one of its parts
    ///     activity = try context.shared(DashboardActivity.self)
    /// }
    /// ```
    /// - Parameter value: the value; one per type (sharing another of the same type replaces it).
    public func share<Value>(_ value: Value) {
        sharedValues.values[ObjectIdentifier(Value.self)] = value
    }

    /// The value of type `Value` that the page's ViewModel shared with ``share(_:)``.
    /// - Parameter type: the type shared.
    /// - Throws: `binding_failed` when the page shared no `Value` (the binding fails, naming the unit).
    public func shared<Value>(_ type: Value.Type) throws(PageError) -> Value {
        guard let value = sharedValues.values[ObjectIdentifier(Value.self)] as? Value else {
            throw PageError(.bindingFailed, "\(unit): the page shares no \(Value.self) with its parts")
        }
        return value
    }

    /// The callback values that pages above this one return when they go back
    /// (`.back(returning: value)`), decoded as `Value`s.
    /// - Parameter type: the type expected; values that do not decode as a `Value` are skipped.
    public func callbacks<Value: Decodable>(of type: Value.Type = Value.self) -> Signal<Value> {
        callbackChannel.signal.compactMap { try? $0.decoded(as: type) }
    }
}

/// The values a page's ViewModel shares with its parts (see ``UnitContext/share(_:)``); touched only while the
/// page is bound, inside its session.
final class SharedValues {
    var values: [ObjectIdentifier: Any] = [:]
}
