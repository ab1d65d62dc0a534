import JSONPatch

/// A page's state driven by one function, `(inout State, Event) -> Effect<Event>`: the shape of most
/// ViewModels (a form, a list that loads more, a sign-in), with async work whose results come back as events.
///
/// The reducer holds the latest state (``state``, what a ``RestorableViewModel`` saves), so a ViewModel needs no
/// boxes of its own and no captured copies of its members. It runs inside the session like every stream:
/// events are applied one at a time, in order, and effects run through the session's scheduler, so their
/// results are in the session's log and a restored page gets them without calling the Model again.
///
/// ```swift
/// final class CountersViewModel: RestorableViewModel {
///     private let reducer: StateReducer<CountersState, CountersEvent>
///     private let pages: any CounterPagesService
///     …
///     func transform(_ input: Signal<CountersEvent>) -> StateOutput<CountersState> {
///         reducer.run(input, on: scheduler) { [pages] state, event in
///             switch event {
///             case .loadMore:
///                 guard let number = state.nextPageToLoad else { return .none }
///                 state.loading = true
///                 return .run { .loaded(try await pages.page(number)) } catching: { .failed(number, $0) }
///             …
///             }
///         }
///     }
/// }
/// ```
public final class StateReducer<State, Event> {
    /// The state after the latest event.
    public var state: State { current }
    @usableFromInline var current: State
    /// The parts of a reducer that most pages never use, made by the first use of one: the state node, the events
    /// sent while one was being applied, and the running effects (a bound page's reducer holds one pointer for them).
    @usableFromInline
    final class LazyParts {
        /// The node of the output's state as a Driver, once somebody read it: it emits the state when its first
        /// observer connects and each new one after. Held weakly: its observers' subscriptions hold it (and it
        /// holds the reducer), so a released page frees both, with no cycle.
        @usableFromInline weak var states: StreamNode<State>?
        /// The events sent while one was being applied (from the reduce function, or an effect that answered at
        /// once), applied in order after it.
        @usableFromInline var queued: [Event] = []
        /// Running effects started with a key, by key: a new one with the same key replaces it.
        @usableFromInline var keyedWork: [String: Subscription] = [:]
        /// Running effects started without a key.
        @usableFromInline var work: [Int: Subscription] = [:]
        @usableFromInline var nextWork = 0

        @inlinable init() {}
    }

    @usableFromInline var lazyParts: LazyParts?
    /// The lazy parts, made now if they were not.
    @inlinable var parts: LazyParts {
        if let lazyParts { return lazyParts }
        let made = LazyParts()
        lazyParts = made
        return made
    }
    /// Where a page bound the state directly (``StateOutput`` bound to a page, with no stream node between): called
    /// with each new state. Set by ``attach(_:)``.
    @usableFromInline var stateWriter: ((State) -> Void)?
    /// The events, once `run` was given them: connected to by the first of the page (``attach(_:)``) and the
    /// observers of the state node to need them, and disconnected (every effect still running cancelled) by the last.
    @usableFromInline var events: Signal<Event>?
    @usableFromInline var eventsSubscription: Subscription?
    /// Whether an event is being applied (those sent meanwhile wait in the lazy parts' `queued`).
    @usableFromInline var isApplying = false
    /// How many of the page and the state node are connected to the events (beside `isApplying`: a byte each). At
    /// most two (a page binds an output once; the state has one node while it lives), so a byte holds it; it wraps
    /// rather than trap.
    @usableFromInline var connections: UInt8 = 0
    /// The routes and topic messages effects ask for; made only by `run(_:on:reduce:)`, since a reducer without
    /// effects never has any (a page keeps less per session).
    @usableFromInline var routes: Relay<Route>?
    @usableFromInline var publications: Relay<TopicMessage>?
    /// Applies an event, returning what to do once the new state is out (its effect); set by `run`.
    @usableFromInline var step: ((inout State, Event) -> (() -> Void)?)?

    /// Whether two states are the same, for an `Equatable` state: an event that changes nothing emits nothing.
    @usableFromInline let isSame: ((State, State) -> Bool)?

    /// A reducer starting from `initial` (a fresh page's state, or the saved state it is restored from).
    /// - Parameter initial: the state before any event.
    @inlinable
    public init(_ initial: State) {
        current = initial
        isSame = nil
    }

    /// A reducer starting from `initial`, whose events that leave the state as it was emit nothing.
    /// - Parameter initial: the state before any event.
    @inlinable
    public init(_ initial: State) where State: Equatable {
        current = initial
        isSame = { $0 == $1 }
    }

    /// Applies each event of `events` with `reduce` from now on, and returns the state for the View. The
    /// subscription ends with the page.
    /// - Parameters:
    ///   - events: the page's events, usually its Input merged and mapped to `Event`s.
    ///   - reduce: applies one event to the state.
    @inlinable
    public func run(_ events: Signal<Event>, reduce: @escaping (inout State, Event) -> Void) -> StateOutput<State> {
        step = { state, event in
            reduce(&state, event)
            return nil
        }
        return output(of: events)
    }

    /// Sends `event` as if it came from the events: for a ViewModel's own timers or callbacks.
    /// - Parameter event: the event to apply.
    @inlinable
    public func send(_ event: Event) {
        guard let step else { return }
        if isApplying {
            parts.queued.append(event)
            return
        }
        isApplying = true
        apply(event, step)
        while let lazyParts, !lazyParts.queued.isEmpty { apply(lazyParts.queued.removeFirst(), step) }
        isApplying = false
    }

    /// Applies one event: the new state, emitted unless unchanged, then its effect.
    @inlinable
    func apply(_ event: Event, _ step: (inout State, Event) -> (() -> Void)?) {
        var next = current
        let effect = step(&next, event)
        let unchanged = isSame?(current, next) ?? false
        current = next
        if !unchanged {
            stateWriter?(next)
            lazyParts?.states?.emit(next)
        }
        effect?()
    }

    @inlinable
    func output(of events: Signal<Event>) -> StateOutput<State> {
        self.events = events
        // No stream node yet: a page binds the state directly (``attach(_:)``); one is made for whoever reads the
        // output's `state` as a Driver. The two closures are made here, in code specialized for the page's state and
        // events (as is what they call), and go with the output once it is bound.
        return StateOutput(
            source: .reducer(attach: { [self] write in attach(write) }, driver: { [self] in stateDriver() }),
            routes: routes?.signal, publications: publications?.signal)
    }

    /// The state as a Driver: it emits the state when its first observer connects and each new one after. The node
    /// holds its reducer (a ViewModel tested alone may be gone); the reducer holds it weakly, and hands out the same
    /// one while it lives.
    @inlinable
    func stateDriver() -> Driver<State> {
        if let states = lazyParts?.states { return Driver(node: states) }
        let node = StreamNode<State>(replaysLatest: true, connector: { [self] target in
            target.emit(current)
            connectEvents()
            return Subscription { [self] in disconnectEvents() }
        })
        parts.states = node
        return Driver(node: node)
    }

    /// Hands `write` the state now and each new one after, until the returned subscription is disposed: a page's
    /// binding of the whole state, with no stream node between the reducer and the page.
    @inlinable
    func attach(_ write: @escaping (State) -> Void) -> Subscription {
        stateWriter = write
        write(current)
        connectEvents()
        return Subscription { [self] in
            stateWriter = nil
            disconnectEvents()
        }
    }

    /// Connects to the events, unless connected already.
    @inlinable
    func connectEvents() {
        connections &+= 1
        guard connections == 1, let events else { return }
        eventsSubscription = events.subscribe { [self] in send($0) }
    }

    /// Disconnects from the events once nobody needs them: every effect still running is cancelled.
    @inlinable
    func disconnectEvents() {
        guard connections > 0 else { return }
        connections &-= 1
        guard connections == 0 else { return }
        eventsSubscription?.dispose()
        eventsSubscription = nil
        cancelAllWork()
    }

    @usableFromInline
    func cancelAllWork() {
        guard let lazyParts else { return }
        for subscription in lazyParts.keyedWork.values { subscription.dispose() }
        for subscription in lazyParts.work.values { subscription.dispose() }
        lazyParts.keyedWork = [:]
        lazyParts.work = [:]
    }
}

extension StateReducer {
    /// Applies each event of `events` (and of the effects they start) with `reduce` from now on, and returns the
    /// state and the routes for the View. Its subscription, and every effect still running, ends with the page.
    /// - Parameters:
    ///   - events: the page's events, usually its Input merged and mapped to `Event`s.
    ///   - scheduler: the session's scheduler (`context.scheduler`), which runs the effects.
    ///   - reduce: applies one event to the state and says what to do next.
    @inlinable
    public func run(
        _ events: Signal<Event>, on scheduler: Scheduler, reduce: @escaping (inout State, Event) -> Effect<Event>
    ) -> StateOutput<State> {
        routes = Relay()
        publications = Relay()
        step = { [weak self] state, event in
            let effect = reduce(&state, event)
            if effect.steps == nil { return nil }
            return { self?.perform(effect, on: scheduler) }
        }
        return output(of: events)
    }

    @usableFromInline
    func perform(_ effect: Effect<Event>, on scheduler: Scheduler) {
        for step in effect.steps ?? [] {
            switch step {
            case .run(let key, let signal):
                let parts = self.parts
                let number = parts.nextWork
                parts.nextWork += 1
                if let key { parts.keyedWork.removeValue(forKey: key)?.dispose() }
                var finished = false
                let subscription = signal(scheduler).subscribe { [weak self] event in
                    finished = true
                    guard let self else { return }
                    if let key {
                        self.lazyParts?.keyedWork.removeValue(forKey: key)
                    } else {
                        self.lazyParts?.work.removeValue(forKey: number)
                    }
                    self.send(event)
                }
                // A result that arrived at once has nothing to remove, and its work nothing to keep.
                if !finished {
                    if let key { parts.keyedWork[key] = subscription } else { parts.work[number] = subscription }
                }
            case .cancel(let key):
                lazyParts?.keyedWork.removeValue(forKey: key)?.dispose()
            case .route(let route):
                routes?.accept(route)
            case .publish(let topic, let value):
                // A value that does not encode, or a name that is not a topic's, publishes nothing, as with
                // `page.publish(_:on:)`.
                guard let value, TopicName.isValid(topic) else { continue }
                publications?.accept(TopicMessage(topic: topic, value: value))
            }
        }
    }
}

/// What a ``StateReducer`` does after an event: nothing, async work whose result is the next event, a
/// cancellation, a navigation, or several of these.
public struct Effect<Event> {
    @usableFromInline
    enum Step {
        case run(key: String?, (Scheduler) -> Signal<Event>)
        case cancel(String)
        case route(Route)
        /// A topic message: the topic's name, and the value as JSON (nil when it does not encode).
        case publish(String, JSONValue?)
    }

    /// The steps; nil for ``none``, which then makes no array (in a reducer's every turn, that is a metadata lookup
    /// saved).
    @usableFromInline let steps: [Step]?

    /// Nothing more.
    public static var none: Effect { Effect(steps: nil) }

    /// Runs `work` (a Model call) like ``run(_:_:)``, and applies the event `then` makes of its result. The result,
    /// not the event, is what the session's log keeps, so a page can change its events without changing its log.
    /// - Parameters:
    ///   - key: names the work, to cancel or replace it.
    ///   - then: the event for its result.
    ///   - work: the async Model call.
    public static func run<Result: Codable & Sendable>(
        _ key: String? = nil, then: @escaping (Result) -> Event, _ work: @escaping @Sendable () async -> Result
    ) -> Effect {
        Effect(steps: [.run(key: key, { $0.perform(work).map(then) })])
    }

    /// Runs `work`, a Model call that may throw, and applies the event `then` makes of its outcome. The outcome (the
    /// result, or the error's description) is what the session's log keeps; a failure arrives as a `RecordedError`
    /// carrying that description, live and after a restart alike.
    /// - Parameters:
    ///   - key: names the work, to cancel or replace it.
    ///   - then: the event for its outcome.
    ///   - work: the async Model call.
    public static func run<Success: Codable & Sendable>(
        _ key: String? = nil, then: @escaping (Result<Success, any Error>) -> Event,
        _ work: @escaping @Sendable () async throws -> Success
    ) -> Effect {
        Effect(steps: [.run(key: key, { $0.performCatchingErrors(work).map(then) })])
    }

    /// Cancels the running work named `key`, if any: its result is never applied.
    /// - Parameter key: the work's key.
    public static func cancel(_ key: String) -> Effect {
        Effect(steps: [.cancel(key)])
    }

    /// Publishes `value` on `topic` (to every session listening, this one's pages included), once the event has been
    /// applied, as `page.publish(_:on:)` does.
    /// - Parameters:
    ///   - value: the message.
    ///   - topic: where.
    public static func publish<Value>(_ value: Value, on topic: Topic<Value>) -> Effect {
        Effect(steps: [.publish(topic.name, try? JSONValueEncoder().encode(value))])
    }

    /// Navigates: the route goes to the session's router once the event has been applied.
    /// - Parameter route: where to go.
    public static func route(_ route: Route) -> Effect {
        Effect(steps: [.route(route)])
    }

    /// All of `effects`, in order.
    /// - Parameter effects: the effects to combine.
    public static func merge(_ effects: Effect...) -> Effect {
        Effect(steps: effects.flatMap { $0.steps ?? [] })
    }
}

extension Effect where Event: Codable & Sendable {
    /// Runs `work` off the session (through its scheduler, so its result is logged) and applies its result as
    /// the next event. With a `key`, a running effect of the same key is cancelled first (its result is never
    /// applied): the latest request wins.
    /// - Parameters:
    ///   - key: names the work, to cancel or replace it; nil for work that is never cancelled but with the page.
    ///   - work: the async Model call.
    public static func run(_ key: String? = nil, _ work: @escaping @Sendable () async -> Event) -> Effect {
        Effect(steps: [.run(key: key, { $0.perform(work) })])
    }

    /// Runs `work`, which may throw, like ``run(_:_:)``; a thrown error becomes the event `failure` makes of
    /// its description (the description is what the session's log keeps).
    /// - Parameters:
    ///   - key: names the work, to cancel or replace it.
    ///   - work: the async Model call.
    ///   - failure: the event for a failure, from the error's description.
    public static func run(
        _ key: String? = nil, _ work: @escaping @Sendable () async throws -> Event,
        catching failure: @escaping @Sendable (String) -> Event
    ) -> Effect {
        run(key) {
            do { return try await work() } catch { return failure(String(describing: error)) }
        }
    }
}

/// A whole page state and its navigation, as a ``StateReducer`` gives them: a View whose Output is a
/// `StateOutput` binds both without code (the state at the page's root, the routes to the router).
public struct StateOutput<State> {
    /// The state.
    public var state: Driver<State> { stateSource.driver }
    /// Where the state comes from: a Driver, or a reducer that a page binds directly.
    let stateSource: StateSource<State>
    /// The navigation the effects asked for.
    public var routes: Signal<Route> { routeSignal ?? .never }
    /// The navigation, when there can be any.
    let routeSignal: Signal<Route>?
    /// The topic messages the effects asked for, when there can be any.
    let publications: Signal<TopicMessage>?

    /// A state with no navigation, or with `routes`.
    /// - Parameters:
    ///   - state: the state.
    ///   - routes: the navigation; none by default.
    public init(state: Driver<State>, routes: Signal<Route> = .never) {
        self.init(state: state, routes: .some(routes), publications: nil)
    }

    @usableFromInline
    init(state: Driver<State>, routes: Signal<Route>?, publications: Signal<TopicMessage>?) {
        self.init(source: .driver(state), routes: routes, publications: publications)
    }

    @usableFromInline
    init(source: StateSource<State>, routes: Signal<Route>?, publications: Signal<TopicMessage>?) {
        self.stateSource = source
        self.routeSignal = routes
        self.publications = publications
    }
}

/// A ``StateOutput``'s state: a Driver, or a reducer that hands its state to a page directly (seen through two
/// closures, its event type erased).
@usableFromInline
enum StateSource<State> {
    case driver(Driver<State>)
    /// `attach` hands a writer the state now and each new one after, until the subscription it returns is disposed;
    /// `driver` gives the state as a Driver.
    case reducer(attach: (@escaping (State) -> Void) -> Subscription, driver: () -> Driver<State>)

    /// The state as a Driver (for a reducer, its state node).
    var driver: Driver<State> {
        switch self {
        case .driver(let driver): return driver
        case .reducer(_, let driver): return driver()
        }
    }
}

extension StateOutput: PageOutput where State: Encodable & Equatable {
    /// Binds the state at the page's root and the routes to the router.
    public func bind(to page: Page) {
        switch stateSource {
        case .driver(let driver): page.bind(driver)
        case .reducer(let attach, _): page.bindState(attach: attach)
        }
        if let routeSignal { page.route(routeSignal) }
        if let publications { page.publish(publications) }
    }
}

/// An Output whose state type is known, so the unit's view schema can be derived from it.
protocol StateSchemaDescribing {
    /// The schema of the state.
    static var stateSchema: JSONValue { get }
}

extension StateOutput: StateSchemaDescribing where State: Decodable {
    static var stateSchema: JSONValue { JSONSchema.of(State.self).document }
}

extension Driver: StateSchemaDescribing where Element: Decodable {
    static var stateSchema: JSONValue { JSONSchema.of(Element.self).document }
}

/// A ViewModel whose state is a ``StateReducer``'s, restorable with no more code: its saved state is the
/// reducer's state, and one initializer makes it fresh (`state` nil) or restored.
///
/// ```swift
/// final class GreetingViewModel: ReducerViewModel {
///     let reducer: StateReducer<GreetingState, Void>
///     init(context: UnitContext, state: GreetingState?) throws {
///         reducer = StateReducer(try state ?? GreetingState(person: context.services.require(Person.self)))
///     }
///     func transform(_ showGreeting: Signal<Void>) -> StateOutput<GreetingState> { … }
/// }
/// ```
///
/// A ViewModel that is not always at a quiet point (a job in flight) declares its own ``savedState``, nil
/// meanwhile.
public protocol ReducerViewModel: RestorableViewModel where SavedState == State {
    /// The page's state, which is also its saved state.
    associatedtype State: Codable & Sendable
    /// What its reducer applies.
    associatedtype Event
    /// The reducer holding the page's state.
    var reducer: StateReducer<State, Event> { get }

    /// Makes the ViewModel for one page: fresh when `state` is nil, else restored from `state`.
    /// - Parameters:
    ///   - context: services, route parameters, the value sent by the router, the scheduler.
    ///   - state: the saved state to restore, or nil for a fresh page.
    init(context: UnitContext, state: State?) throws
}

extension ReducerViewModel {
    /// The reducer's state.
    public var savedState: SavedState? { reducer.state }

    /// A fresh ViewModel: `init(context:state:)` with no state.
    /// - Parameter context: what the page is bound with.
    public init(context: UnitContext) throws {
        try self.init(context: context, state: nil)
    }

    /// A restored ViewModel: `init(context:state:)` with the saved state.
    /// - Parameters:
    ///   - context: what the page is bound with.
    ///   - savedState: the state saved.
    public init(context: UnitContext, restoring savedState: SavedState) throws {
        try self.init(context: context, state: savedState)
    }
}
