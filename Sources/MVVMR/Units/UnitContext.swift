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
    let sentValue: Any?
    let callbackChannel: CallbackChannel

    /// A context for a ViewModel bound outside a session, for tests of a ViewModel alone.
    /// - Parameters:
    ///   - unit: the unit's name.
    ///   - services: the services the ViewModel reads.
    ///   - parameters: route parameters.
    ///   - scheduler: usually `Scheduler.virtual()`.
    ///   - sentValue: the value a router sent, if any.
    public init(
        unit: String, services: Services = Services(), parameters: [String: String] = [:],
        scheduler: Scheduler, sentValue: Any? = nil
    ) {
        self.init(
            unit: unit, services: services, parameters: parameters, scheduler: scheduler, sentValue: sentValue,
            callbackChannel: CallbackChannel())
    }

    init(
        unit: String, services: Services, parameters: [String: String], scheduler: Scheduler, sentValue: Any?,
        callbackChannel: CallbackChannel
    ) {
        self.unit = unit
        self.services = services
        self.parameters = parameters
        self.scheduler = scheduler
        self.sentValue = sentValue
        self.callbackChannel = callbackChannel
    }

    /// The value the router sent to this page (`.push(.detail, sending: person)`), if it is a `Value`.
    /// - Parameter type: the type expected.
    public func sentValue<Value>(as type: Value.Type = Value.self) -> Value? {
        sentValue as? Value
    }

    /// The callback values of type `Value` that pages above this one return when they go back
    /// (`.back(returning: value)`).
    /// - Parameter type: the type expected; values of other types are skipped.
    public func callbacks<Value>(of type: Value.Type = Value.self) -> Signal<Value> {
        callbackChannel.signal.compactMap { $0 as? Value }
    }
}
