import Foundation
import JSONPatch
import MVVMRProtocol

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A client of an MVVMR page server: it holds one session, a copy of each of its pages (the view
/// document, its `rev` and its actions) and the navigation, and keeps them current from action
/// responses and the server's event stream.
///
/// ```swift
/// let client = PageClient(baseURL: serverURL)   // e.g. http://localhost:8080
/// let changes = client.changes()
/// try await client.openSession()              // POST /api/sessions: the root page
/// client.startEvents()                         // GET /api/events, reconnecting by itself
/// try await client.send("showGreeting")        // to the top page; patch applied locally
/// print(client.topPage?.view["greeting"] ?? nil)
/// for await change in changes { ... }          // .pageChanged("greeting"), .navigated(...), ...
/// ```
///
/// The rules it follows (docs/PROTOCOL.md): a patch is applied only from the rev the client holds and
/// ignored when its rev is not newer; a gap makes the client `GET` the page again; snapshots and
/// navigations replace a page. Actions carry an `Idempotency-Key` reused on every retry; network
/// errors and `503` are retried (honouring `Retry-After`), `4xx` never. When the server no longer knows
/// the session, the client opens a new one at the page it was on and reports
/// ``PageClientChange/sessionRecovered(_:)``.
///
/// All members are safe to use from any thread or task. The event stream runs until ``stopEvents()``
/// or ``closeSession()``; while it runs, it keeps the client alive.
public final class PageClient: Sendable {
    /// The server's address (`http://localhost:8080`); the API paths are appended to it.
    public let baseURL: URL
    /// How the client retries, reconnects and times out.
    public let configuration: PageClientConfiguration
    let transport: any PageTransport
    let state = ClientLock(State())

    /// Counters for tests and debugging.
    struct Diagnostics: Sendable {
        var resyncs = 0
        var connections = 0
        var lastEventIDsSent: [Int?] = []
        var eventsReceived = 0
        var recoveries = 0
        var requests = 0
    }

    struct State: Sendable {
        var sessionID: String?
        var pages: [String: ClientPage] = [:]
        var parameters: [String: [String: String]] = [:]
        var navigation = PageNavigation()
        var navigationSequence = -1
        var lastNavigation: PageNavigationChange?
        var lastEventID: Int?
        var subscribers: [UUID: AsyncStream<PageClientChange>.Continuation] = [:]
        var eventsTask: Task<Void, Never>?
        var connection: EventStreamConnection?
        var connected = false
        var recovery: (lost: String, task: Task<String, any Error>)?
        var resyncing: Set<String> = []
        var serverRetry: TimeInterval?
        var diagnostics = Diagnostics()

        func emit(_ changes: [PageClientChange]) {
            for change in changes {
                for subscriber in subscribers.values { subscriber.yield(change) }
            }
        }
    }

    /// Creates a client; nothing is sent until a call.
    /// - Parameters:
    ///   - baseURL: the server's address, e.g. `http://localhost:8080`.
    ///   - configuration: retries, reconnects and timeouts.
    ///   - transport: how requests are sent; a `URLSession` without cookies by default.
    public init(
        baseURL: URL, configuration: PageClientConfiguration = PageClientConfiguration(),
        transport: (any PageTransport)? = nil
    ) {
        self.baseURL = baseURL
        self.configuration = configuration
        self.transport = transport ?? URLSessionPageTransport(timeout: configuration.requestTimeout)
    }

    deinit {
        let subscribers = state.withLock { state in
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    // MARK: - Reading

    /// The session's id, once a session is open.
    public var sessionID: String? { state.withLock { $0.sessionID } }

    /// The navigation: the stack of unit names (top last) and the presented unit.
    public var navigation: PageNavigation { state.withLock { $0.navigation } }

    /// Every page the client holds, by unit name.
    public var pages: [String: ClientPage] { state.withLock { $0.pages } }

    /// The client's copy of a unit's page, if it holds one.
    /// - Parameter unit: the unit's name.
    public func page(_ unit: String) -> ClientPage? { state.withLock { $0.pages[unit] } }

    /// The page on top of the navigation stack, if the client holds it.
    public var topPage: ClientPage? {
        state.withLock { state in state.navigation.top.flatMap { state.pages[$0] } }
    }

    /// The id (seq) of the last event received on the event stream, or of the session's latest event when
    /// it was opened; sent as `Last-Event-ID` when the stream reconnects.
    public var lastEventID: Int? { state.withLock { $0.lastEventID } }

    /// Whether the client follows the event stream (between ``startEvents()`` and ``stopEvents()``).
    public var isFollowingEvents: Bool { state.withLock { $0.eventsTask != nil } }

    /// Whether the event stream is connected right now.
    public var isEventStreamConnected: Bool { state.withLock { $0.connected } }

    /// A new stream of the client's changes, from now on. Each call makes a separate stream; every stream
    /// gets every change, in order. The stream ends when the consumer stops iterating.
    /// - Returns: the stream.
    public func changes() -> AsyncStream<PageClientChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: PageClientChange.self, bufferingPolicy: .unbounded)
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        state.withLock { $0.subscribers[id] = continuation }
        return stream
    }

    // MARK: - Sessions and pages

    /// Opens a new session (`POST /api/sessions`) and makes it the client's, dropping the pages of any
    /// previous one. The event stream, if followed, moves to the new session.
    /// - Parameters:
    ///   - unit: the unit the session starts at; the server's root when `nil`.
    ///   - parameters: route parameters for that first page.
    /// - Returns: the first page.
    /// - Throws: ``PageClientError`` (`unknown_unit`, unreachable server, …).
    @discardableResult
    public func openSession(at unit: String? = nil, parameters: [String: String] = [:]) async throws -> ClientPage {
        let opened = try await requestNewSession(at: unit, parameters: parameters)
        install(opened, recovered: false)
        return opened.page
    }

    /// Fetches a unit's page (`GET /api/pages/{unit}`), binding it on the server if needed (without
    /// changing the navigation), and holds it. With no session yet, opens one at that unit.
    /// - Parameters:
    ///   - unit: the unit's name.
    ///   - parameters: route parameters (the query string), used when the page is bound.
    /// - Returns: the client's copy of the page afterwards.
    /// - Throws: ``PageClientError``.
    @discardableResult
    public func load(_ unit: String, parameters: [String: String] = [:]) async throws -> ClientPage {
        guard sessionID != nil else { return try await openSession(at: unit, parameters: parameters) }
        let (body, _, session) = try await call("GET", ["api", "pages", unit], query: parameters)
        let page = try ProtocolDecoding.page(body)
        return state.withLock { state in
            guard state.sessionID == session else { return page }
            state.parameters[unit] = parameters
            if Self.install(page, in: &state) { state.emit([.pageChanged(unit)]) }
            return state.pages[unit] ?? page
        }
    }

    /// Replaces everything the client holds with the session as the server has it (`GET /api/session`):
    /// every live page and the navigation.
    /// - Throws: ``PageClientError``.
    public func synchronize() async throws {
        let (body, _, session) = try await call("GET", ["api", "session"])
        let answer = try ProtocolDecoding.decode(body, as: WireSession.self)
        let pages = answer.pages.map(ClientPage.init)
        let navigation = PageNavigation(answer.navigation)
        let sequence = answer.seq
        state.withLock { state in
            guard state.sessionID == session else { return }
            var changes: [PageClientChange] = []
            let live = Set(pages.map(\.unit))
            for unit in state.pages.keys.sorted() where !live.contains(unit) {
                state.pages[unit] = nil
                changes.append(.pageRemoved(unit))
            }
            if navigation != state.navigation {
                state.navigation = navigation
                state.navigationSequence = max(state.navigationSequence, sequence)
                if let top = navigation.top {
                    let change = PageNavigationChange(kind: .root, unit: top, navigation: navigation)
                    state.lastNavigation = change
                    changes.append(.navigated(change))
                }
            }
            for page in pages where state.pages[page.unit] != page {
                state.pages[page.unit] = page
                changes.append(.pageChanged(page.unit))
            }
            state.emit(changes)
        }
    }

    /// Ends the session on the server (`DELETE /api/session`), stops the event stream and drops every page.
    /// A session the server no longer knows is simply dropped.
    /// - Throws: ``PageClientError`` when the server could not be reached.
    public func closeSession() async throws {
        stopEvents()
        guard let session = sessionID else { return }
        let request = makeRequest("DELETE", ["api", "session"], session: session)
        let response = try await exchange(request, policy: .unsafe)
        state.withLock { state in
            guard state.sessionID == session else { return }
            state.sessionID = nil
            state.pages = [:]
            state.parameters = [:]
            state.navigation = PageNavigation()
            state.navigationSequence = -1
            state.lastNavigation = nil
            state.lastEventID = nil
        }
        if !(200..<300).contains(response.status) && response.status != 404 {
            throw PageClientError.server(ProtocolDecoding.serverError(response))
        }
    }

    // MARK: - Actions and navigation

    /// Sends an action to a page (`POST /api/pages/{unit}/actions`) and applies the answer: its patch from
    /// the rev the client held, or its snapshot, and the navigation it caused (the new top page's snapshot
    /// included).
    ///
    /// The request carries an `Idempotency-Key` (a new UUID unless given) reused on every retry, so the
    /// action is delivered once even when an answer was lost. Network errors and `503` are retried with
    /// backoff (`Retry-After` honoured) up to ``PageClientConfiguration/maxActionAttempts``; `4xx` never.
    /// - Parameters:
    ///   - action: the action's name.
    ///   - value: its value (`null` for actions without one).
    ///   - unit: the page's unit; the top of the stack when `nil`.
    ///   - idempotencyKey: the key for this logical action; a new UUID when `nil`.
    /// - Returns: what the server answered.
    /// - Throws: ``PageClientError``: `.server` for protocol errors (`unknown_action`, `invalid_value`…),
    ///   `.sessionRecovered` when the session was lost (the action was not delivered), `.transport` after
    ///   the last attempt.
    @discardableResult
    public func send(
        _ action: String, value: JSONValue = .null, to unit: String? = nil, idempotencyKey: String? = nil
    ) async throws -> ActionReceipt {
        let resolved = state.withLock { state -> Result<(String, Int?), PageClientError> in
            guard state.sessionID != nil else { return .failure(.noSession) }
            guard let target = unit ?? state.navigation.top else { return .failure(.noPage) }
            return .success((target, state.pages[target]?.rev))
        }
        let (target, baseRev) = try resolved.get()
        let request = WireActionRequest(action: action, value: value, rev: baseRev)
        let key = idempotencyKey ?? UUID().uuidString
        let (body, response, session) = try await call(
            "POST", ["api", "pages", target, "actions"], body: request.jsonBytes, idempotencyKey: key)
        let answer = try ProtocolDecoding.decode(body, as: WireActionResponse.self)
        let (unit, rev, seq) = (answer.unit, answer.rev, answer.seq)
        var patch: JSONPatch?
        var snapshot: ClientPage?
        switch answer.change {
        case .patch(let changes): patch = changes
        case .snapshot(let page): snapshot = ClientPage(page)
        case .none: break
        }
        let navigation = answer.navigation.map(ProtocolDecoding.navigation)
        var resync: [String] = []
        state.withLock { state in
            guard state.sessionID == session else { return }
            var changes: [PageClientChange] = []
            if let patch {
                switch Self.applyPatch(patch, unit: unit, from: baseRev, to: rev, in: &state) {
                case .applied: changes.append(.pageChanged(unit))
                case .ignored: break
                case .gap: resync.append(unit)
                }
            }
            if let snapshot, Self.install(snapshot, in: &state) { changes.append(.pageChanged(snapshot.unit)) }
            if let navigation {
                changes += Self.applyNavigation(navigation.change, page: navigation.page, sequence: seq, in: &state)
            }
            state.emit(changes)
        }
        for unit in resync { scheduleResync(unit) }
        return ActionReceipt(
            unit: unit, rev: rev, seq: seq, replayed: response.header("Idempotent-Replayed") == "true",
            navigation: navigation?.change, navigationErrorCode: answer.navigationError?.code)
    }

    /// Pops the top page (`POST /api/navigation` `{"type": "back"}`), as a system back button does; no
    /// callback value goes to the page below. Not retried after a network error (it is not idempotent).
    /// - Returns: the navigation, or `nil` when nothing moved.
    /// - Throws: ``PageClientError``.
    @discardableResult
    public func goBack() async throws -> PageNavigationChange? {
        try await navigate(.back)
    }

    /// Opens a unit (`POST /api/navigation` `{"type": "open"}`): pops back to it when it is on the stack,
    /// else pushes it (deep links).
    /// - Parameters:
    ///   - unit: the unit's name.
    ///   - parameters: route parameters for a pushed page.
    /// - Returns: the navigation, or `nil` when nothing moved.
    /// - Throws: ``PageClientError``.
    @discardableResult
    public func open(_ unit: String, parameters: [String: String] = [:]) async throws -> PageNavigationChange? {
        try await navigate(.open(unit: unit, parameters: parameters))
    }

    private func navigate(_ request: WireNavigationRequest) async throws -> PageNavigationChange? {
        let (body, _, session) = try await call("POST", ["api", "navigation"], body: request.jsonBytes, policy: .unsafe)
        let answer = try ProtocolDecoding.decode(body, as: WireNavigationResponse.self)
        guard let moved = answer.navigation else { return nil }
        let navigation = ProtocolDecoding.navigation(moved)
        let sequence: Int? = answer.seq
        state.withLock { state in
            guard state.sessionID == session else { return }
            state.emit(Self.applyNavigation(navigation.change, page: navigation.page, sequence: sequence, in: &state))
        }
        return navigation.change
    }
}
