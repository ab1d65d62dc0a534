import Foundation
import JSONPatch
import MVVMRProtocol

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Requests, retries and session recovery.
extension PageClient {
    enum RetryPolicy {
        /// Safe to repeat: network errors and `503` are retried.
        case idempotent
        /// Not safe to repeat after a lost answer: only `503` (nothing was done) is retried.
        case unsafe
    }

    /// A new session as `POST /api/sessions` answered it.
    struct OpenedSession {
        let session: String
        let page: ClientPage
        let navigation: PageNavigation
        let sequence: Int
        let parameters: [String: String]
    }

    func makeRequest(
        _ method: String, _ path: [String], query: [String: String] = [:], body: [UInt8]? = nil, session: String?,
        idempotencyKey: String? = nil
    ) -> URLRequest {
        var url = baseURL
        for component in path { url.appendPathComponent(component) }
        if !query.isEmpty, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            components.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
            if let withQuery = components.url { url = withQuery }
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = configuration.requestTimeout
        for (name, value) in configuration.additionalHeaders { request.setValue(value, forHTTPHeaderField: name) }
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let session { request.setValue(session, forHTTPHeaderField: "X-Session-ID") }
        if let idempotencyKey { request.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key") }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body)
        }
        return request
    }

    /// Sends a request, retrying per `policy` with backoff; returns the first answer that is not retried.
    func exchange(_ request: URLRequest, policy: RetryPolicy) async throws -> TransportResponse {
        let attempts = max(1, configuration.maxActionAttempts)
        var attempt = 0
        while true {
            attempt += 1
            state.withLock { $0.diagnostics.requests += 1 }
            let response: TransportResponse
            do {
                response = try await transport.send(request)
            } catch {
                if error is CancellationError || Task.isCancelled { throw CancellationError() }
                guard policy == .idempotent, attempt < attempts else {
                    throw PageClientError.transport(String(describing: error))
                }
                try await Self.sleep(seconds: backoff(attempt: attempt))
                continue
            }
            if response.status == 503, attempt < attempts {
                let delay = response.header("Retry-After").flatMap(ProtocolDecoding.retryAfterSeconds) ?? backoff(attempt: attempt)
                if delay <= configuration.maxRetryAfter {
                    try await Self.sleep(seconds: delay)
                    continue
                }
            }
            return response
        }
    }

    /// Sends a request with the session's id and returns its JSON body; a lost session is recovered
    /// (and reported as ``PageClientError/sessionRecovered(_:)``).
    /// - Returns: the body (`null` when empty), the answer, and the session id the request was sent with.
    func call(
        _ method: String, _ path: [String], query: [String: String] = [:], body: [UInt8]? = nil,
        policy: RetryPolicy = .idempotent, idempotencyKey: String? = nil
    ) async throws -> (JSONValue, TransportResponse, String) {
        guard let session = sessionID else { throw PageClientError.noSession }
        let request = makeRequest(method, path, query: query, body: body, session: session, idempotencyKey: idempotencyKey)
        let response = try await exchange(request, policy: policy)
        guard (200..<300).contains(response.status) else {
            let info = ProtocolDecoding.serverError(response)
            if info.status == 404, info.code == "unknown_session", configuration.recoversSessions {
                let recovered = try await recoverSession(lost: session)
                throw PageClientError.sessionRecovered(recovered)
            }
            throw PageClientError.server(info)
        }
        let json = response.body.isEmpty ? JSONValue.null : try ProtocolDecoding.json(response.body)
        return (json, response, session)
    }

    /// `POST /api/sessions` (retried like an idempotent request: a duplicate session only idles out).
    func requestNewSession(at unit: String?, parameters: [String: String]) async throws -> OpenedSession {
        let body = WireNewSession(unit: unit, parameters: parameters).jsonBytes
        let request = makeRequest("POST", ["api", "sessions"], body: body, session: nil)
        let response = try await exchange(request, policy: .idempotent)
        guard (200..<300).contains(response.status) else {
            throw PageClientError.server(ProtocolDecoding.serverError(response))
        }
        let created = try ProtocolDecoding.decode(try ProtocolDecoding.json(response.body), as: WireSessionCreated.self)
        return OpenedSession(
            session: created.page.session, page: ClientPage(created.page.page),
            navigation: PageNavigation(created.page.navigation), sequence: created.page.seq, parameters: parameters)
    }

    /// Makes a new session the client's: its first page, its navigation, its seq as the last event id.
    func install(_ opened: OpenedSession, recovered: Bool) {
        let connection = state.withLock { state -> EventStreamConnection? in
            state.sessionID = opened.session
            var changes: [PageClientChange] = [recovered ? .sessionRecovered(opened.session) : .sessionOpened(opened.session)]
            for unit in state.pages.keys.sorted() where unit != opened.page.unit { changes.append(.pageRemoved(unit)) }
            state.pages = [opened.page.unit: opened.page]
            state.parameters = [opened.page.unit: opened.parameters]
            let navigationChanged = state.navigation != opened.navigation
            state.navigation = opened.navigation
            state.navigationSequence = opened.sequence
            let change = PageNavigationChange(kind: .root, unit: opened.page.unit, navigation: opened.navigation)
            state.lastNavigation = change
            if navigationChanged { changes.append(.navigated(change)) }
            changes.append(.pageChanged(opened.page.unit))
            state.lastEventID = opened.sequence
            state.resyncing = []
            if recovered { state.diagnostics.recoveries += 1 }
            state.emit(changes)
            // A stream still attached to another session moves to this one.
            if let connection = state.connection, connection.sessionID != opened.session { return connection }
            return nil
        }
        connection?.cancel()
    }

    /// Opens a new session at the page the client was on, once per lost session however many requests
    /// noticed the loss, and reports it. Returns the session the client is at afterwards.
    func recoverSession(lost: String) async throws -> String {
        enum Plan {
            case already(String)
            case wait(Task<String, any Error>)
        }
        let plan = state.withLock { state -> Plan in
            if let current = state.sessionID, current != lost { return .already(current) }
            if let recovery = state.recovery, recovery.lost == lost { return .wait(recovery.task) }
            let unit = state.navigation.top ?? state.pages.keys.sorted().first
            let parameters = unit.flatMap { state.parameters[$0] } ?? [:]
            let task = Task { try await self.performRecovery(lost: lost, unit: unit, parameters: parameters) }
            state.recovery = (lost, task)
            return .wait(task)
        }
        switch plan {
        case .already(let session): return session
        case .wait(let task): return try await task.value
        }
    }

    private func performRecovery(lost: String, unit: String?, parameters: [String: String]) async throws -> String {
        defer { state.withLock { state in if state.recovery?.lost == lost { state.recovery = nil } } }
        let opened: OpenedSession
        do {
            opened = try await requestNewSession(at: unit, parameters: parameters)
        } catch PageClientError.server(let info) where info.code == "unknown_unit" && unit != nil {
            // The page's unit is gone from the server: start at its root.
            opened = try await requestNewSession(at: nil, parameters: [:])
        }
        let current = state.withLock { $0.sessionID }
        guard current == lost else { return current ?? opened.session }
        install(opened, recovered: true)
        return opened.session
    }

    /// `GET`s a page again after a gap in its revisions (once at a time per unit).
    func scheduleResync(_ unit: String) {
        let start = state.withLock { state -> Bool in
            guard state.pages[unit] != nil, state.resyncing.insert(unit).inserted else { return false }
            state.diagnostics.resyncs += 1
            return true
        }
        guard start else { return }
        Task {
            defer { state.withLock { _ = $0.resyncing.remove(unit) } }
            guard let (body, _, session) = try? await call("GET", ["api", "pages", unit]),
                let page = try? ProtocolDecoding.page(body)
            else { return }
            state.withLock { state in
                guard state.sessionID == session, state.pages[unit] != nil else { return }
                if Self.install(page, in: &state) { state.emit([.pageChanged(unit)]) }
            }
        }
    }

    func backoff(attempt: Int) -> TimeInterval {
        let exponential = configuration.retryBaseDelay * pow(2, Double(max(0, attempt - 1)))
        return min(configuration.maxRetryDelay, exponential) * Double.random(in: 0.8...1.2)
    }

    static func sleep(seconds: TimeInterval) async throws {
        guard seconds > 0 else { return }
        try await Task.sleep(nanoseconds: UInt64(min(seconds, 3600) * 1_000_000_000))
    }
}
