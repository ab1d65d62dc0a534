import JSONPatch
import MVVMR
import MVVMRProtocol
import MicroHTTP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The protocol's endpoints.
extension PageServer {
    static let cookieName = "mvvmr_session"

    func makeRouter() -> HTTPRouter {
        var router = HTTPRouter()
        route(&router, "GET", "/api/units") { [unitsBody] _ in .json(unitsBody) }
        // These answer once what they show is stored (``Acknowledgement``).
        storedRoute(&router, "POST", "/api/sessions") { [self] request, ack throws(ProtocolError) in try createSessionResponse(request, &ack) }
        storedRoute(&router, "GET", "/api/session") { [self] request, ack throws(ProtocolError) in try sessionResponse(request, &ack) }
        route(&router, "DELETE", "/api/session") { [self] request throws(ProtocolError) in try deleteSessionResponse(request) }
        storedRoute(&router, "GET", "/api/pages/{unit}") { [self] request, ack throws(ProtocolError) in try pageResponse(request, &ack) }
        storedRoute(&router, "POST", "/api/pages/{unit}/actions") { [self] request, ack throws(ProtocolError) in try actionResponse(request, &ack) }
        storedRoute(&router, "POST", "/api/navigation") { [self] request, ack throws(ProtocolError) in try navigationResponse(request, &ack) }
        route(&router, "GET", "/api/events") { [self] request throws(ProtocolError) in try eventsResponse(request) }
        route(&router, "GET", "/api/session/log") { [self] request throws(ProtocolError) in try sessionLogResponse(request) }
        route(&router, "GET", "/api/openapi.json") { [openAPIBody] _ in .json(openAPIBody) }
        route(&router, "GET", "/healthz") { _ in .json(WireStatus.ok.jsonBytes) }
        route(&router, "GET", "/readyz") { [self] _ in
            if isDraining { return .json(WireStatus.draining.jsonBytes, status: 503) }
            // A node whose session store cannot be reached (NATS down) cannot keep inputs: send no traffic to it.
            if !store.isAvailable { return .json(WireStatus.storeUnavailable.jsonBytes, status: 503) }
            return .json(WireStatus.ready.jsonBytes)
        }
        route(&router, "GET", "/metrics") { [metrics] _ in
            HTTPResponse(
                status: 200, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
                body: .bytes(Array(metrics.render().utf8)))
        }
        let staticOK = RouteStatusCounter(requestCounter, route: "static")
        router.fallback = .synchronous { [self] request in
            instrumented(request, route: "static", counting: staticOK) { request throws(ProtocolError) in
                staticResponse(request)
            }
        }
        return router
    }

    private func route(
        _ router: inout HTTPRouter, _ method: String, _ pattern: String,
        _ handler: @escaping @Sendable (HTTPRequest) throws(ProtocolError) -> HTTPResponse
    ) {
        // The usual outcome's series is looked up once, so most requests count themselves without a lookup.
        let ok = RouteStatusCounter(requestCounter, route: pattern)
        router.add(method, pattern, .synchronous { [self] request in instrumented(request, route: pattern, counting: ok, handler) })
    }

    /// A route whose answer shows what a session's inputs caused: it goes out only once the input it shows is
    /// stored (at once with the memory store, after the group commit with SQLite, with the connection suspended
    /// meanwhile); when the store failed it, the answer is 503 `store_unavailable` instead.
    private func storedRoute(
        _ router: inout HTTPRouter, _ method: String, _ pattern: String,
        _ handler: @escaping @Sendable (HTTPRequest, inout Acknowledgement) throws(ProtocolError) -> HTTPResponse
    ) {
        let ok = RouteStatusCounter(requestCounter, route: pattern)
        router.add(method, pattern, .deferred { [self] request, responder in
            let started = MonotonicClock.microseconds()
            var ack = Acknowledgement()
            // The answer that waits for the store is made only when the input is not stored yet.
            let (response, durability) = storedAttempt(request, with: handler, acknowledging: &ack) { session, response, credential in
                let answer = StoredAnswer(responder: responder) { [self] failure in
                    let answer = failure.map { storeRefusal($0, session: session) } ?? response
                    return account(request, route: pattern, counting: ok, answer, started: started, credential: credential)
                }
                return { failure in answer.send(failure) }
            }
            let credential = ack.credential
            switch durability {
            case .none, .stored:
                return account(request, route: pattern, counting: ok, response, started: started, credential: credential)
            case .setAside:
                // Set aside again under the second attempt, before anything of it was stored: the client may retry.
                let refusal = ProtocolError.storeUnavailable.httpError.response
                return account(request, route: pattern, counting: ok, refusal, started: started, credential: credential)
            case .waiting:
                return nil
            case .failed(let failure):
                let refusal = ack.session.map { storeRefusal(failure, session: $0) } ?? ProtocolError.storeUnavailable.httpError.response
                return account(request, route: pattern, counting: ok, refusal, started: started, credential: credential)
            case .ended:
                let unknown = ProtocolError.unknownSession.httpError.response
                return account(request, route: pattern, counting: ok, unknown, started: started, credential: credential)
            }
        })
    }

    /// Runs a stored route's handler, and asks the session it worked on (`ack.session`) whether what the answer shows
    /// is stored; the notification is made (`notification`, from the session, the response and the request's
    /// credential) only when the answer waits for the store.
    ///
    /// When the session's copy was set aside under the request (another node took the session over, or it was
    /// passivated: ``ServerSession/Durability/setAside``) before anything the request did was queued for the store,
    /// the handler runs once more, on the session restored from the store: the first attempt acted on a copy whose
    /// pages were released (`409 page_not_bound`, an empty session) or whose records were refused, and nothing of it
    /// reached the store or a client. Once only: a second ``ServerSession/Durability/setAside`` is returned (the
    /// route answers it 503 `store_unavailable`, which a client retries) rather than loop.
    /// - Returns: the handler's response (its protocol error's, when it threw), and whether what it shows is stored
    ///   (nil: the request worked on no session).
    @inline(__always)
    func storedAttempt(
        _ request: HTTPRequest,
        with handler: (HTTPRequest, inout Acknowledgement) throws(ProtocolError) -> HTTPResponse,
        acknowledging ack: inout Acknowledgement,
        notification: (ServerSession, HTTPResponse, Acknowledgement.CredentialReading) -> @Sendable (SessionStoreError?) -> Void
    ) -> (HTTPResponse, ServerSession.Durability?) {
        var again = false
        while true {
            let response: HTTPResponse
            var threw = false
            do throws(ProtocolError) {
                response = try handler(request, &ack)
            } catch {
                response = error.httpError.response
                threw = true
            }
            guard let session = ack.session else { return (response, nil) }
            let durability = session.durability(
                of: ack.inputNumber, acceptedSince: ack.acceptedMark,
                recordedNothing: threw && ack.recordsNothingWhenItThrows && !ack.receipt.recordedAnInput
            ) {
                notification(session, response, ack.credential)
            }
            if case .setAside = durability, !again {
                again = true
                ack = Acknowledgement()
                setAsideReruns.increment()
                logger.log(.debug, "request_rerun", [("session", .string(SessionIdentifier.redacted(session.identifier)))])
                continue
            }
            return (response, durability)
        }
    }

    /// The answer for a request whose input the store could not keep (logged, counted), or whose session ended meanwhile.
    private func storeRefusal(_ failure: SessionStoreError, session: ServerSession) -> HTTPResponse {
        // The copy was set aside (taken over, passivated) after the answer began to wait, and the input's record
        // was refused: nothing was stored, the store did not fail, and the client may send it again.
        if failure.kind == .outOfOrder, session.wasSetAside {
            logger.log(.debug, "request_copy_set_aside", [("session", .string(SessionIdentifier.redacted(session.identifier)))])
            return ProtocolError.storeUnavailable.httpError.response
        }
        // A request that raced the session's end (DELETE, or expiry) found it in memory and applied its input, and
        // the store refused the record because the session is gone from it: to the client the session is unknown,
        // as it would be a moment later, and the store has not failed (so no 503, no store failure counted).
        if failure.kind == .outOfOrder, case .some(.none) = try? store.load(session.identifier) {
            return ProtocolError.unknownSession.httpError.response
        }
        storeFailures.increment()
        logger.log(
            .error, "store_unavailable",
            [("session", .string(SessionIdentifier.redacted(session.identifier))), ("error", .string(failure.description))])
        return ProtocolError.storeUnavailable.httpError.response
    }

    /// Runs a handler, turning its protocol error into the JSON error response, and counts and logs the request.
    private func instrumented(
        _ request: HTTPRequest, route: String, counting ok: RouteStatusCounter,
        _ handler: (HTTPRequest) throws(ProtocolError) -> HTTPResponse
    ) -> HTTPResponse {
        let started = MonotonicClock.microseconds()
        let response: HTTPResponse
        do {
            response = try handler(request)
        } catch {
            response = error.httpError.response
        }
        return account(request, route: route, counting: ok, response, started: started)
    }

    /// Counts and logs an answered request.
    /// - Parameter credential: the session id the request carried, when its handler read it already.
    private func account(
        _ request: HTTPRequest, route: String, counting ok: RouteStatusCounter, _ response: HTTPResponse,
        started: Int, credential: Acknowledgement.CredentialReading = .notRead
    ) -> HTTPResponse {
        ok.count(response.status)
        let level: LogLevel = response.status >= 500 ? .error : response.status >= 400 ? .warning : .info
        if logger.isEnabled(level) {
            logger.logRequest(
                level,
                RequestLogFields(
                    method: request.method, path: request.rawPath, status: response.status,
                    microseconds: MonotonicClock.microseconds() - started, address: logAddress(request),
                    session: credential.identifier(orElse: { credentials(request) })))
        }
        return response
    }

    /// The client's address as a request's log line gives it: the one ``clientAddress(_:)`` names, kept as the
    /// peer's bytes when no trusted proxy named another.
    private func logAddress(_ request: HTTPRequest) -> RequestLogFields.Address {
        forwardedAddress(request).map { .forwarded($0) } ?? .peer(request.remoteIP)
    }

    // MARK: - Requests

    /// The session id a request carries: `X-Session-ID` wins over the cookie.
    /// With `acceptingQuery` (the event stream only), the `session` query parameter comes between the two: a browser's
    /// `EventSource` cannot set headers, and a client that keeps one session per tab cannot use the cookie, which every
    /// tab shares. The query parameter is never logged: request logs carry the path without its query.
    func credentials(_ request: HTTPRequest, acceptingQuery: Bool = false) -> String? {
        if let header = request.headers["X-Session-ID"], !header.isEmpty { return header }
        if acceptingQuery, let fromQuery = request.queryValue("session"), !fromQuery.isEmpty { return fromQuery }
        if let cookie = request.cookies[Self.cookieName], !cookie.isEmpty { return cookie }
        return nil
    }

    /// The `retry:` an event stream starts with: 1,000 to 2,999 ms, drawn for each stream (jitter).
    static func streamRetryMilliseconds() -> Int { 1_000 + Int.random(in: 0..<2_000) }

    /// The address a request counts against (limits, logs): the peer's, or behind a trusted proxy the rightmost
    /// `X-Forwarded-For` entry, the one that proxy appended. Entries to its left are the client's own words (a
    /// client may send any `X-Forwarded-For` it likes, and proxies append to it), so believing the first would
    /// let a client pick the address it is limited as.
    func clientAddress(_ request: HTTPRequest) -> String {
        forwardedAddress(request) ?? request.remoteAddress
    }

    /// The rightmost `X-Forwarded-For` entry, when the server trusts a proxy to have appended it (see
    /// ``clientAddress(_:)``); nil otherwise, or when the header has none.
    private func forwardedAddress(_ request: HTTPRequest) -> String? {
        guard configuration.trustForwardedHeaders, let forwarded = request.headers["X-Forwarded-For"],
            let last = forwarded.split(separator: ",").last
        else { return nil }
        let address = String(last).trimmingSpaces
        return address.isEmpty ? nil : address
    }

    private func requestScheme(_ request: HTTPRequest) -> String {
        if configuration.trustForwardedHeaders, let proto = request.headers["X-Forwarded-Proto"]?.lowercased(),
            proto == "https" || proto == "http"
        {
            return proto
        }
        return "http"
    }

    private func requireAllowedOrigin(_ request: HTTPRequest) throws(ProtocolError) {
        guard originPolicy.allows(origin: request.headers["Origin"], requestScheme: requestScheme(request),
                                  requestHost: requestHost(request)) else {
            throw .forbiddenOrigin
        }
    }

    /// The host a request was sent to: its `Host`, or behind a trusted proxy its `X-Forwarded-Host` when it has one.
    private func requestHost(_ request: HTTPRequest) -> String? {
        configuration.trustForwardedHeaders ? request.headers["X-Forwarded-Host"] ?? request.headers["Host"] : request.headers["Host"]
    }

    private func session(for request: HTTPRequest) throws(ProtocolError) -> ServerSession {
        guard let identifier = credentials(request) else { throw .unknownSession }
        return try session(identifiedBy: identifier)
    }

    /// ``session(for:)``, noting in `ack` the id the request carried, for its log line.
    private func session(for request: HTTPRequest, noting ack: inout Acknowledgement) throws(ProtocolError) -> ServerSession {
        guard let identifier = credentials(request, noting: &ack) else { throw .unknownSession }
        return try session(identifiedBy: identifier)
    }

    /// ``credentials(_:acceptingQuery:)`` (header or cookie), noted in `ack` for the request's log line.
    private func credentials(_ request: HTTPRequest, noting ack: inout Acknowledgement) -> String? {
        let identifier = credentials(request)
        ack.noteCredential(identifier)
        return identifier
    }

    /// The session, from memory or restored from the store.
    private func session(identifiedBy identifier: String) throws(ProtocolError) -> ServerSession {
        guard SessionIdentifier.isWellFormed(identifier), let session = try liveSession(identifier) else { throw .unknownSession }
        return session
    }

    private func parseJSONBody(_ request: HTTPRequest, allowEmpty: Bool) throws(ProtocolError) -> JSONValue {
        if request.body.isEmpty || request.body.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 }) {
            if allowEmpty { return .object(JSONObject()) }
            throw .invalidJSON("the body is empty")
        }
        do {
            return try JSONValue(parsing: request.body, maxDepth: 64)
        } catch {
            throw .invalidJSON(error.description)
        }
    }

    /// The headers of every JSON answer about a session, made once and shared (copy-on-write).
    static let jsonNoStore: HTTPHeaders = [
        "Content-Type": "application/json", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
    ]
    /// The headers of an action response replayed for a repeated `Idempotency-Key`.
    static let jsonNoStoreReplayed: HTTPHeaders = [
        "Content-Type": "application/json", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
        "Idempotent-Replayed": "true",
    ]

    private func json(_ message: some WireMessage, status: Int = 200, headers: [HTTPHeader] = []) -> HTTPResponse {
        var allHeaders = Self.jsonNoStore
        for header in headers { allHeaders.add(name: header.name, value: header.value) }
        return HTTPResponse(status: status, headers: allHeaders, body: .bytes(message.jsonBytes))
    }

    private func sessionCookie(_ identifier: String, for request: HTTPRequest) -> HTTPHeader {
        let secure = configuration.publicOrigin.hasPrefix("https://") || requestScheme(request) == "https"
        return HTTPHeader(name: "Set-Cookie", value: "\(Self.cookieName)=\(identifier); Path=/; HttpOnly; SameSite=Lax\(secure ? "; Secure" : "")")
    }

    /// An action's fields, read from its body's bytes when the body is an object of scalars (most are), else from
    /// the body parsed whole; with `digestingBody` (an idempotency key names the request by it), the body is parsed
    /// whole and its digest returned too.
    private func actionRequest(
        _ request: HTTPRequest, digestingBody: Bool
    ) throws(ProtocolError) -> (WireActionRequest, bodyDigest: UInt64?) {
        if !digestingBody {
            do throws(WireDecodingError) {
                if let fields = try WireActionRequest(scalarMembersOf: request.body) { return (fields, bodyDigest: nil) }
            } catch {
                throw .invalidRequest(error.message)
            }
        }
        let body = try parseJSONBody(request, allowEmpty: false)
        let fields = try decode(body, as: WireActionRequest.self)
        return (fields, bodyDigest: digestingBody ? IdempotencyCache.digest(of: body) : nil)
    }

    /// A request body read as its message; what is wrong with it is `400 invalid_request`.
    private func decode<Message: WireMessage>(_ body: JSONValue, as type: Message.Type) throws(ProtocolError) -> Message {
        do throws(WireDecodingError) {
            return try Message(json: body)
        } catch {
            throw .invalidRequest(error.message)
        }
    }

    private func queryParameters(_ request: HTTPRequest) -> [String: String] {
        var parameters: [String: String] = [:]
        for item in request.query where parameters[item.name] == nil { parameters[item.name] = item.value ?? "" }
        return parameters
    }

    // MARK: - Sessions

    /// Opens a session whose first page is `unit` (the root when nil).
    private func openSession(
        at unit: UnitCase?, parameters: [String: String], request: HTTPRequest
    ) throws(ProtocolError) -> (ServerSession, NavigationResult) {
        if isDraining { throw .draining }
        if let retryAfter = newSessionLimiter.admit(clientAddress(request)) { throw .rateLimited(retryAfter: retryAfter) }
        let session = ServerSession(
            identifier: SessionIdentifier.generate(), environment: sessionEnvironment)
        session.joinTopics()
        let started: NavigationResult
        do throws(PageError) {
            started = try session.pages.start(at: unit, parameters: parameters)
        } catch {
            session.pages.releaseAll()
            throw ProtocolError(error)
        }
        let (inserted, evicted) = sessions.insert(session, identifier: session.identifier)
        if let evicted {
            // Out of memory, not out of the store: its next request restores it.
            passivate(evicted)
            evictions.increment()
        }
        guard inserted else {
            session.pages.releaseAll()
            throw .overloaded
        }
        return (session, started)
    }

    private func topSnapshot(of session: ServerSession, after result: NavigationResult) throws(ProtocolError) -> PageSnapshot {
        if let page = result.navigation?.page { return page }
        guard let top = result.state.stack.last else { throw ProtocolError(status: 500, code: "internal_error", message: "The session has no page.") }
        do throws(PageError) {
            return try session.pages.snapshot(of: top)
        } catch {
            throw ProtocolError(error)
        }
    }

    private func createSessionResponse(_ request: HTTPRequest, _ ack: inout Acknowledgement) throws(ProtocolError) -> HTTPResponse {
        try requireAllowedOrigin(request)
        let options = try decode(try parseJSONBody(request, allowEmpty: true), as: WireNewSession.self)
        var unit: UnitCase?
        var refusal: PageError?
        var parameters = options.parameters
        if let unitName = options.unit {
            guard let found = registry.unit(named: unitName) else { throw .unknownUnit(unitName) }
            if found.entry.admitsDeepLinks {
                unit = found
            } else {
                // A page only its flow reaches: the session starts where the flow does, and the body says why.
                refusal = .entryRefused(unitName)
                parameters = [:]
            }
        }
        let (session, started) = try openSession(at: unit, parameters: parameters, request: request)
        let page = try topSnapshot(of: session, after: started)
        ack.after(session, input: session.pages.inputNumber)
        let created = WireSessionCreated(
            page: page.wire(session: session.identifier, sequence: started.sequence, navigation: started.state),
            navigationError: refusal?.wireNavigationError)
        return json(created, status: 201, headers: [sessionCookie(session.identifier, for: request)])
    }

    /// `GET /api/session`: the session's navigation and live pages.
    func sessionResponse(_ request: HTTPRequest, _ ack: inout Acknowledgement) throws(ProtocolError) -> HTTPResponse {
        let session = try session(for: request, noting: &ack)
        // It only reads.
        ack.uses(session, recordsNothingWhenItThrows: true)
        ack.after(session, input: session.pages.inputNumber)
        let sequence = session.pages.sequence
        let navigation = session.pages.navigation
        let pages = session.pages.pages
        return json(
            WireSession(session: session.identifier, seq: sequence, navigation: navigation.wire, pages: pages.map(\.wire)))
    }

    private func deleteSessionResponse(_ request: HTTPRequest) throws(ProtocolError) -> HTTPResponse {
        try requireAllowedOrigin(request)
        // A passivated session is in the store only: it is restored, so that it ends like one in memory.
        guard let identifier = credentials(request), SessionIdentifier.isWellFormed(identifier),
            try liveSession(identifier) != nil, let session = sessions.remove(identifier)
        else { throw .unknownSession }
        end(session, reason: "deleted")
        return HTTPResponse(
            status: 204,
            headers: HTTPHeaders([HTTPHeader(name: "Set-Cookie", value: "\(Self.cookieName)=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0")]))
    }

    // MARK: - Pages and actions

    private func pageResponse(_ request: HTTPRequest, _ ack: inout Acknowledgement) throws(ProtocolError) -> HTTPResponse {
        let name = request.pathParameters["unit"] ?? ""
        guard let served = servedUnits[name] else { throw .unknownUnit(name) }
        let parameters = queryParameters(request)
        guard let identifier = credentials(request, noting: &ack) else {
            // Refused before a session is made: a deep link to a page only its flow reaches creates nothing.
            if !served.unit.entry.admitsDeepLinks { throw ProtocolError(PageError.entryRefused(name)) }
            let (session, started) = try openSession(at: served.unit, parameters: parameters, request: request)
            let page = try topSnapshot(of: session, after: started)
            ack.after(session, input: session.pages.inputNumber)
            return json(
                page.wire(session: session.identifier, sequence: started.sequence, navigation: started.state),
                headers: [sessionCookie(session.identifier, for: request)])
        }
        let session = try self.session(identifiedBy: identifier)
        // The read's own receipt says whether it recorded before it failed.
        ack.uses(session, recordsNothingWhenItThrows: true)
        let read: PageRead
        do throws(PageError) {
            read = try session.pages.read(name, parameters: parameters, asDeepLink: true, noting: &ack.receipt)
        } catch {
            throw ProtocolError(error)
        }
        ack.after(session, input: read.inputNumber)
        let body = read.body(session: session.identifier, encodedActions: served.encodedActions)
        return HTTPResponse(status: 200, headers: Self.jsonNoStore, body: .bytes(body))
    }

    /// `POST /api/pages/{unit}/actions`: delivers an action to the unit's page and answers its patch.
    func actionResponse(_ request: HTTPRequest, _ ack: inout Acknowledgement) throws(ProtocolError) -> HTTPResponse {
        let started = MonotonicClock.microseconds()
        let unit = request.pathParameters["unit"] ?? ""
        let metrics = servedUnits[unit]?.metrics
        try requireAllowedOrigin(request)
        let key = try idempotencyKey(request)
        let session = try session(for: request, noting: &ack)
        // Its refusals before the action record nothing; the action's own receipt says whether it did.
        ack.uses(session, recordsNothingWhenItThrows: true)
        let (fields, bodyDigest) = try actionRequest(request, digestingBody: key != nil)
        let (action, value, clientRevision) = (fields.action, fields.value, fields.rev)
        try requireValueWithinLimit(value, bodyBytes: request.body.count)

        func perform(_ annotation: JSONValue?, noting receipt: inout InputReceipt) throws(ProtocolError) -> ActionOutcome {
            try session.requireRoomToGrow(droppingExpiredResponses: annotation == nil)
            do throws(PageError) {
                let result = try session.pages.perform(
                    action, value: value, on: unit, clientRevision: clientRevision, annotation: annotation,
                    noting: &receipt)
                let bytes = result.responseBody
                // The response's size stands for the patch's: encoding the patch a second time only to count
                // its bytes would cost more than the rest of the bookkeeping.
                if result.patch != nil { self.countPatchBytes(bytes.count, unit: unit, metrics: metrics) }
                return ActionOutcome(status: 200, body: bytes, inputNumber: result.inputNumber)
            } catch {
                throw ProtocolError(error)
            }
        }
        let outcome: ActionOutcome
        do throws(ProtocolError) {
            if let key, let requestDigest = bodyDigest {
                // The key's lock is held across the action, so a retry racing the first attempt waits for it
                // and replays its response instead of delivering the action twice.
                outcome = try session.idempotency.withLock { cache throws(ProtocolError) -> ActionOutcome in
                    switch cache.lookup(key: key, unit: unit, requestDigest: requestDigest) {
                    case .replay(let status, let body, let inputNumber):
                        return ActionOutcome(status: status, body: body, replayed: true, inputNumber: inputNumber)
                    case .conflict: throw ProtocolError.idempotencyKeyReused
                    case .miss:
                        let now = ContinuousClock.now
                        let admission = cache.admit(key: key, now: now)
                        session.noteIdempotencyBytes(cache.byteCount)
                        if case .full(let retryAfter) = admission {
                            throw ProtocolError.idempotencyCacheFull(limit: cache.byteLimit, retryAfter: retryAfter)
                        }
                        let fresh = try perform(
                            ServerSession.idempotencyAnnotation(key: key, requestDigest: requestDigest), noting: &ack.receipt)
                        cache.store(
                            key: key, unit: unit, requestDigest: requestDigest, status: fresh.status, body: fresh.body,
                            inputNumber: fresh.inputNumber, now: now)
                        session.noteIdempotencyBytes(cache.byteCount)
                        return fresh
                    }
                }
            } else {
                outcome = try perform(nil, noting: &ack.receipt)
            }
        } catch {
            // Refused on a copy that left memory meanwhile (its pages released): no client gets this refusal (the
            // request runs again on the restored session, or is told the session ended), so it is not counted.
            if !session.hasLeftMemory {
                // Labels only from the app's own names: a made-up unit or action must not become a series.
                actionCounter.increment([metrics == nil ? MetricLabel.unknown : unit, metrics?.actionLabel(action) ?? MetricLabel.unknown, error.code])
            }
            throw error
        }
        countAction(action, of: unit, metrics: metrics, replayed: outcome.replayed, tookMicroseconds: MonotonicClock.microseconds() - started)
        ack.after(session, input: outcome.inputNumber)
        return HTTPResponse(
            status: outcome.status, headers: outcome.replayed ? Self.jsonNoStoreReplayed : Self.jsonNoStore,
            body: .bytes(outcome.body))
    }

    /// The action's `Idempotency-Key`, or `nil` without one (an empty one counts as none); a key longer
    /// than the limit is refused before anything else is looked at.
    private func idempotencyKey(_ request: HTTPRequest) throws(ProtocolError) -> String? {
        guard let key = request.headers["Idempotency-Key"], !key.isEmpty else { return nil }
        guard key.utf8.count <= sessionLimits.idempotencyKeyBytes else {
            throw .invalidIdempotencyKey(limit: sessionLimits.idempotencyKeyBytes)
        }
        return key
    }

    /// Refuses an action value whose compact JSON text is longer than the limit.
    ///
    /// Re-encoding a value makes its text at most about 4.5 times longer than it was in the body (a number
    /// like `1e15` is the worst case: `1000000000000000.0`; escapes written in the body only shorten), so a
    /// body of at most an eighth of the limit cannot hold a value over it and is not encoded: the common
    /// small action costs one comparison.
    private func requireValueWithinLimit(_ value: JSONValue, bodyBytes: Int) throws(ProtocolError) {
        let limit = sessionLimits.actionValueBytes
        guard bodyBytes > limit / 8 else { return }
        if value.jsonBytes.count > limit { throw .valueTooLarge(limit: limit) }
    }

    /// Counts an answered action and its time, in the unit's series looked up at start (every registered
    /// unit and action has one; a replay goes to the general counter).
    private func countAction(_ action: String, of unit: String, metrics: UnitMetrics?, replayed: Bool, tookMicroseconds elapsed: Int) {
        if !replayed, let series = metrics?.actionsOK[action] {
            series.increment()
        } else {
            actionCounter.increment([
                metrics == nil ? MetricLabel.unknown : unit, metrics?.actionLabel(action) ?? MetricLabel.unknown,
                replayed ? "replayed" : "ok",
            ])
        }
        let seconds = Double(elapsed) / 1e6
        if let latency = metrics?.latency { latency.observe(seconds) } else { actionLatency.observe(seconds, [MetricLabel.unknown]) }
    }

    /// Counts the bytes of a response that carried a patch.
    private func countPatchBytes(_ count: Int, unit: String, metrics: UnitMetrics?) {
        if let series = metrics?.patchBytes {
            series.increment(by: Double(count))
        } else {
            patchBytes.increment([MetricLabel.unknown], by: Double(count))
        }
    }

    /// `POST /api/navigation`: a client's `back`, `forward` or `open` in the session's navigation stack.
    func navigationResponse(_ request: HTTPRequest, _ ack: inout Acknowledgement) throws(ProtocolError) -> HTTPResponse {
        try requireAllowedOrigin(request)
        let session = try session(for: request, noting: &ack)
        // Its refusals before the navigation record nothing; the navigation's own receipt says whether it did.
        ack.uses(session, recordsNothingWhenItThrows: true)
        let navigation: ClientNavigation
        switch try decode(try parseJSONBody(request, allowEmpty: false), as: WireNavigationRequest.self) {
        case .back:
            navigation = .back
        case .forward:
            navigation = .forward
        case .open(let unit, let parameters):
            guard registry.unit(named: unit) != nil else { throw .unknownUnit(unit) }
            navigation = .open(unit, parameters: parameters)
        }
        let result: NavigationResult
        do throws(PageError) {
            result = try session.pages.navigate(navigation, noting: &ack.receipt)
        } catch {
            throw ProtocolError(error)
        }
        ack.after(session, input: result.inputNumber)
        return json(WireNavigationResponse(seq: result.sequence, navigation: result.navigation?.wire))
    }

    // MARK: - Session log

    /// `GET /api/session/log`: the session's stored snapshot (when its log was compacted) and input records, in
    /// the versioned format of docs/PROTOCOL.md ("Session logs"), for a bug report that `PageTester` can replay;
    /// 403 `session_log_disabled` with `SESSION_LOG=off`.
    private func sessionLogResponse(_ request: HTTPRequest) throws(ProtocolError) -> HTTPResponse {
        guard configuration.servesSessionLogs else { throw .sessionLogDisabled }
        let session = try session(for: request)
        let stored: StoredSession?
        do throws(SessionStoreError) {
            stored = try store.load(session.identifier)
        } catch {
            logger.log(.error, "store_unavailable", [("operation", "load"), ("error", .string(error.description))])
            throw .storeUnavailable
        }
        var body: [UInt8] = []
        body.reserveCapacity(stored?.records.reduce(128) { $0 + $1.body.count + 1 } ?? 128)
        body += Array(#"{"format":"mvvmr-session-log","version":2,"units":"#.utf8)
        JSONValue.array(registry.units.map { .string($0.name) }).encode(into: &body)
        if let snapshot = stored?.snapshot {
            body += Array(#","snapshot":"#.utf8)
            body += snapshot.body
        }
        body += Array(#","records":["#.utf8)
        for (index, record) in (stored?.records ?? []).enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body += record.body
        }
        body += Array("]}".utf8)
        return HTTPResponse(status: 200, headers: Self.jsonNoStore, body: .bytes(body))
    }

    // MARK: - Events

    /// `GET /api/events`: the session's event stream (Server-Sent Events), from `Last-Event-ID` when given.
    func eventsResponse(_ request: HTTPRequest) throws(ProtocolError) -> HTTPResponse {
        guard let named = credentials(request, acceptingQuery: true) else { throw .unknownSession }
        var session = try session(identifiedBy: named)
        // Both are checked, so a malformed one is refused even where the other (the header) would win.
        let fromHeader = try eventIdentifier(request.headers["Last-Event-ID"])
        let fromQuery = try eventIdentifier(request.queryValue("lastEventId"))
        let lastEventID = fromHeader ?? fromQuery
        let address = clientAddress(request)
        guard streamsPerAddress.acquire(address) else {
            throw .tooManyStreams(scope: "address", limit: streamsPerAddress.limit)
        }
        let stream = EventStream(bufferLimit: 1 << 20)
        // A reconnect delay of 1 to 3 s, different for each stream: when a node dies, its streams' clients do not
        // all come back to the next node in the same instant.
        stream.send(bytes: Array("retry: \(Self.streamRetryMilliseconds())\n\n".utf8))
        var attachment = session.attach(stream, lastEventID: lastEventID)
        if attachment == .expired, session.wasSetAside {
            // The copy found was set aside meanwhile (taken over, passivated): the session goes on in the store.
            // Once more, on the session restored from there, rather than tell the client its session is gone.
            do throws(ProtocolError) {
                session = try self.session(identifiedBy: named)
            } catch {
                streamsPerAddress.release(address)
                throw error
            }
            setAsideReruns.increment()
            attachment = session.attach(stream, lastEventID: lastEventID)
        }
        switch attachment {
        case .attached: break
        case .expired:
            streamsPerAddress.release(address)
            throw .unknownSession
        case .tooManyStreams:
            streamsPerAddress.release(address)
            throw .tooManyStreams(scope: "session", limit: sessionLimits.streamsPerSession)
        }
        sessions.streamOpened(session.identifier)
        openStreams.add(1, ordering: .relaxed)
        let identifier = session.identifier
        stream.onTermination { [weak self, weak session] _ in
            session?.detach(stream)
            self?.sessions.streamClosed(identifier)
            self?.streamsPerAddress.release(address)
            self?.openStreams.subtract(1, ordering: .relaxed)
        }
        return .eventStream(stream)
    }

    /// A `Last-Event-ID` (header or query): absent or empty is none; anything else must be a whole number ≥ 0.
    /// A `Last-Event-ID` (header or query), read by ``RequestParsing/lastEventID(_:)``; `nil` when absent or empty.
    private func eventIdentifier(_ text: String?) throws(ProtocolError) -> Int? {
        guard let text else { return nil }
        do throws(RequestFieldError) {
            return try RequestParsing.lastEventID(text)
        } catch {
            throw .invalidRequest(error.message)
        }
    }

    // MARK: - Files

    private func staticResponse(_ request: HTTPRequest) -> HTTPResponse {
        // A unit's route asked for by a browser is the client's page: it renders the unit (deep links).
        if request.pathSegments.count == 1, registry.unit(named: request.pathSegments[0]) != nil,
            (request.headers["Accept"] ?? "").contains("text/html")
        {
            return Self.withDocumentPolicy(
                staticFiles.response(forSegments: ["index.html"], ifNoneMatch: request.headers["If-None-Match"]))
        }
        let response = staticFiles.response(for: request)
        // A browser's unknown address gets the client, with status 404: it tells the user there is no such page in
        // the app's own words, instead of showing raw JSON. Asked for by anything else, it is the JSON 404.
        if response.status == 404, request.method == "GET" || request.method == "HEAD",
            (request.headers["Accept"] ?? "").contains("text/html"), request.pathSegments.first != "api"
        {
            var shell = staticFiles.response(forSegments: ["index.html"], ifNoneMatch: nil)
            if shell.status == 200 {
                shell.status = 404
                shell.headers["ETag"] = nil
                return Self.withDocumentPolicy(shell)
            }
        }
        return Self.withDocumentPolicy(response)
    }

    /// What a page of the client may load and who may frame it: scripts, styles, images and connections from this
    /// server only (the client has no inline script or style), no plugins, no framing by any site.
    static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// A static file's response with the headers a browser applies to what it loads: the content security policy
    /// and no framing on HTML, and no referrer on everything.
    static func withDocumentPolicy(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers["Referrer-Policy"] = "no-referrer"
        if response.headers["Content-Type"]?.hasPrefix("text/html") == true || response.status == 304 {
            response.headers["Content-Security-Policy"] = contentSecurityPolicy
            response.headers["X-Frame-Options"] = "DENY"
        }
        return response
    }
}

/// What an action request produced (or replayed from the idempotency cache).
struct ActionOutcome {
    let status: Int
    let body: [UInt8]
    var replayed = false
    /// The input the answer shows (the action's own record, or for a replayed answer the first attempt's).
    var inputNumber: Int?
}

/// What a request's answer shows of a session, so that it goes out only once that is stored: set by the
/// handler, read by ``PageServer/storedRoute``. A value the route lends its handler (no object per request).
struct Acknowledgement {
    /// Whether a handler read the session id a request carried, and what it was.
    enum CredentialReading {
        case notRead
        case read(String?)

        /// The id read, or `read()`'s when none was.
        func identifier(orElse read: () -> String?) -> String? {
            if case .read(let identifier) = self { return identifier }
            return read()
        }
    }

    private(set) var session: ServerSession?
    private(set) var inputNumber: Int?
    /// The session's ``ServerSession/acceptedInputMark`` when the request found it (``uses(_:recordsNothingWhenItThrows:)``).
    private(set) var acceptedMark: Int?
    /// Whether the handler, once it found the session, records no input when it throws other than in the page-session
    /// steps noted in ``receipt`` (see ``uses(_:recordsNothingWhenItThrows:)``).
    private(set) var recordsNothingWhenItThrows = false
    /// The request's page-session steps (a handler passes it to `PageSession`'s `noting:` methods): whether one of
    /// them recorded an input, even one that then threw.
    var receipt = InputReceipt()
    /// The session id the request carried, once its handler read it (its log line then does not read it again).
    private(set) var credential = CredentialReading.notRead

    /// The answer shows `session` up to input `input` (its latest when the request logged nothing).
    mutating func after(_ session: ServerSession, input: Int?) {
        self.session = session
        inputNumber = input
    }

    /// The request works on `session`: even when it fails, its answer is 503 `store_unavailable` if the store
    /// failed the session meanwhile. (A request that found the session healthy and acted on it after a store
    /// failure had it dropped, its pages released, would otherwise get whatever the released pages say, such as
    /// `409 page_not_bound`, while the session restored from the store has the page.) When the copy is set aside
    /// instead (taken over, passivated) before anything the request did was queued for the store, the request runs
    /// again (``PageServer/storedAttempt(_:with:acknowledging:notification:)``).
    ///
    /// - Parameter recordsNothingWhenItThrows: true for a handler whose every step that may record an input is a
    ///   page-session step noted in ``receipt``: when it throws and the receipt saw no input, a copy set aside under
    ///   it is known untouched by it even when other requests' inputs were queued since it took its mark, and it runs
    ///   again. False (the default) leaves that to the mark alone: no record queued since, whoever made it.
    mutating func uses(_ session: ServerSession, recordsNothingWhenItThrows: Bool = false) {
        self.session = session
        acceptedMark = session.acceptedInputMark
        self.recordsNothingWhenItThrows = recordsNothingWhenItThrows
    }

    /// Notes the session id the request carried (nil: none).
    mutating func noteCredential(_ identifier: String?) {
        credential = .read(identifier)
    }
}

/// The answer to a request whose input waits for the store, sent by the store's completion: it keeps the request, the
/// response and the responder until the library's thread has taken the answer, so that they are freed on that thread,
/// where they were allocated, and not on the store's completion thread (see ``DeferredResponder/respond(_:keepingUntilSent:)``).
private final class StoredAnswer: Sendable {
    private let responder: DeferredResponder
    private let make: @Sendable (SessionStoreError?) -> HTTPResponse

    /// An answer for `responder`'s request, made by `make` from the store's outcome (nil: stored).
    init(responder: DeferredResponder, make: @escaping @Sendable (SessionStoreError?) -> HTTPResponse) {
        self.responder = responder
        self.make = make
    }

    /// Sends the answer for the store's outcome.
    func send(_ failure: SessionStoreError?) {
        responder.respond(make(failure), keepingUntilSent: self)
    }
}

/// A route's request counts by status, the statuses the server answers with looked up once: counting a request is
/// an atomic add, with no lock and no lookup (a flood of refused requests would otherwise meet on the counter's lock).
struct RouteStatusCounter: Sendable {
    /// The statuses the server's own answers have.
    static let knownStatuses = [200, 201, 204, 304, 400, 403, 404, 405, 409, 413, 414, 422, 429, 431, 500, 503]

    private let counter: Counter
    private let route: String
    /// The most common status's series, counted without a lookup.
    private let ok: CounterSeries
    /// The other known statuses' series.
    private let series: [Int: CounterSeries]

    /// The counts of `route` in `counter` (labels: route, status).
    init(_ counter: Counter, route: String) {
        self.counter = counter
        self.route = route
        ok = counter.series([route, "200"])
        series = Dictionary(
            uniqueKeysWithValues: Self.knownStatuses.filter { $0 != 200 }.map { ($0, counter.series([route, String($0)])) })
    }

    /// Counts one request answered with `status`.
    func count(_ status: Int) {
        if status == 200 {
            ok.increment()
        } else if let known = series[status] {
            known.increment()
        } else {
            counter.increment([route, String(status)])
        }
    }
}
