import Dispatch
#if canImport(Glibc)
    import Glibc
#endif
import JSONPatch
import Locking
import MVVMR
import MicroHTTP
import Testing

@testable import MVVMRServer

/// A store shared by two nodes in one process, whose claims have an order, as JetStream's do; a step of the test's
/// can run inside the next claim (where a restore holds its session's lock).
final class OrderedClaimsStore: ForwardingSessionStore {
    let inner = MemorySessionStore()
    private let lastOrder = Locked<UInt64>(0)
    private let duringClaim = Locked<(@Sendable () -> Void)?>(nil)

    /// Runs `step` inside the next claim, once.
    func once(duringClaim step: @escaping @Sendable () -> Void) { duringClaim.withLock { $0 = step } }

    func claim(_ session: String, asLoaded stored: StoredSession) throws(SessionStoreError) -> SessionClaim? {
        duringClaim.withLock { step in defer { step = nil }; return step }?()
        return SessionClaim(order: lastOrder.withLock { order in
            order += 1
            return order
        })
    }
}

/// What a stored route made of a request: its response, what it shows and whether that is stored.
struct StoredAttempt {
    var response: HTTPResponse
    var ack: Acknowledgement
    var durability: ServerSession.Durability?
    var session: ServerSession? { ack.session }
}

extension PageServer {
    /// ``storedAttempt(_:with:acknowledging:notification:)`` with a notification that does nothing.
    func storedAttempt(
        _ request: HTTPRequest, with handler: (HTTPRequest, inout Acknowledgement) throws(ProtocolError) -> HTTPResponse
    ) -> StoredAttempt {
        var ack = Acknowledgement()
        let (response, durability) = storedAttempt(request, with: handler, acknowledging: &ack) { _, _, _ in { _ in } }
        return StoredAttempt(response: response, ack: ack, durability: durability)
    }
}

/// A node drops its copy of a session when another node announces a later claim of it, not an earlier one; and a
/// request that found the copy just before it was set aside (taken over, passivated) is answered from the session
/// as the store has it.
@Suite(.serialized) struct TakenOverSessionTests {
    private static func node(_ store: OrderedClaimsStore) -> PageServer {
        PageServer(units: [.echo], root: .echo, store: store)
    }

    /// A session made on `server`, with one input stored.
    private static func echoSession(on server: PageServer, saying text: String) throws -> ServerSession {
        let session = ServerSession(identifier: SessionIdentifier.generate(), environment: server.sessionEnvironment)
        try session.pages.start()
        try session.pages.perform("text", value: .string(text), on: "echo")
        #expect(server.sessions.insert(session, identifier: session.identifier).inserted)
        return session
    }

    @Test func aNoticeOfAClaimEarlierThanTheCopysArrivingLateKeepsTheCopy() throws {
        let store = OrderedClaimsStore()
        let (first, second) = (Self.node(store), Self.node(store))
        let made = try Self.echoSession(on: first, saying: "hello")
        let identifier = made.identifier
        #expect(made.claim == .unordered, "a session made here was restored from no claim")

        // The second node restores it (claim 1); the first node drops its copy on the notice, then takes the session
        // back (claim 2).
        let secondsCopy = try #require(try second.liveSession(identifier))
        #expect(secondsCopy.claim == SessionClaim(order: 1))
        first.dropCopyTakenOver(identifier, claim: secondsCopy.claim)
        #expect(made.wasSetAside && first.sessions.peek(identifier) == nil)
        let firstsCopy = try #require(try first.liveSession(identifier))
        #expect(firstsCopy !== made && firstsCopy.claim == SessionClaim(order: 2))

        // The second node's notice again, late: the first node's copy is newer.
        first.dropCopyTakenOver(identifier, claim: secondsCopy.claim)
        #expect(first.sessions.peek(identifier) === firstsCopy && !firstsCopy.wasSetAside)
        #expect(first.takeovers.value() == 1)
        #expect(try firstsCopy.pages.perform("text", value: "still here", on: "echo").inputNumber == 3)

        // The first node's own notice drops the second node's copy; a later claim, or one of unknown order, drops any.
        second.dropCopyTakenOver(identifier, claim: firstsCopy.claim)
        #expect(second.sessions.peek(identifier) == nil && secondsCopy.wasSetAside)
        first.dropCopyTakenOver(identifier, claim: .unordered)
        #expect(first.sessions.peek(identifier) == nil && firstsCopy.wasSetAside)
        #expect(first.takeovers.value() == 2)
    }

    /// What failed the cluster check: another node's notice, of a claim made before this node's restore claimed the
    /// session, waited for the restore's lock and then dropped the copy the restore had just made.
    @Test func aNoticeThatWaitedForARestoreClaimingAfterItKeepsTheRestoredCopy() async throws {
        let store = OrderedClaimsStore()
        let (first, second) = (Self.node(store), Self.node(store))
        let made = try Self.echoSession(on: second, saying: "hello")
        let identifier = made.identifier
        // The second node claims it (order 1) as the first node starts restoring it; the second node's notice reaches
        // the first node while its restore holds the session's lock, and waits.
        let secondsClaim = try #require(try store.claim(identifier, asLoaded: StoredSession(snapshot: nil, records: [])))
        let noticeHandled = Locked(false)
        store.once {
            DispatchQueue.global().async {
                first.dropCopyTakenOver(identifier, claim: secondsClaim)
                noticeHandled.withLock { $0 = true }
            }
            usleep(50_000)
        }
        let restored = try #require(try first.liveSession(identifier))
        #expect(restored.claim == SessionClaim(order: 2))
        #expect(await TopicFanoutTests.eventually { noticeHandled.withLock { $0 } })
        #expect(first.sessions.peek(identifier) === restored && !restored.wasSetAside, "the restored copy was dropped")
        #expect(first.takeovers.value() == 0)
    }

    /// An action request to `server` for `session` (with a key, so that the test can hold the request between
    /// finding the session and acting on it: the key's lock).
    private static func actionRequest(_ session: String, text: String) -> HTTPRequest {
        var request = HTTPRequest(
            method: "POST", path: "/api/pages/echo/actions",
            headers: HTTPHeaders([
                HTTPHeader(name: "X-Session-ID", value: session), HTTPHeader(name: "Content-Type", value: "application/json"),
                HTTPHeader(name: "Idempotency-Key", value: "key-\(text)"),
            ]),
            body: Array(#"{"action":"text","value":"\#(text)"}"#.utf8))
        request.pathParameters = ["unit": "echo"]
        return request
    }

    private static func errorCode(_ response: HTTPResponse) -> String? {
        guard case .bytes(let body) = response.body, let json = try? JSONValue(parsing: body) else { return nil }
        return json["error"]?["code"]?.stringValue
    }

    /// Runs `request` through the action route on `server` on another thread, holding it after it found `copy`
    /// (on the copy's idempotency lock) while `meanwhile` runs; returns the route's attempt.
    private static func action(
        _ request: HTTPRequest, on server: PageServer, holding copy: ServerSession, meanwhile: () -> Void
    ) async throws -> StoredAttempt {
        let started = Locked(false)
        let result = Locked<StoredAttempt?>(nil)
        copy.idempotency.withLock { _ in
            DispatchQueue.global().async {
                let attempt = server.storedAttempt(request, with: { request, ack throws(ProtocolError) in
                    started.withLock { $0 = true }
                    return try server.actionResponse(request, &ack)
                })
                result.withLock { $0 = attempt }
            }
            while !started.withLock({ $0 }) { usleep(1_000) }
            // From finding the session to waiting for its key's lock is microseconds of work.
            usleep(100_000)
            meanwhile()
        }
        #expect(await TopicFanoutTests.eventually { result.withLock { $0 != nil } })
        return try #require(result.withLock { $0 })
    }

    @Test func anActionWhoseCopyIsTakenOverUnderItIsAnsweredFromTheRestoredSession() async throws {
        let server = Self.node(OrderedClaimsStore())
        let made = try Self.echoSession(on: server, saying: "hello")
        let attempt = try await Self.action(Self.actionRequest(made.identifier, text: "acted"), on: server, holding: made) {
            server.dropCopyTakenOver(made.identifier, claim: SessionClaim(order: 9))
        }
        #expect(attempt.response.status == 200, "\(attempt.response.body)")
        #expect(server.setAsideReruns.value() == 1, "the request ran again")
        let restored = try #require(server.sessions.peek(made.identifier))
        #expect(restored !== made && attempt.session === restored && attempt.ack.inputNumber == 3)
        #expect(restored.pages.inputNumber == 3, "made, hello, acted: the input once, on the restored copy")
        #expect(made.pages.inputNumber == 2, "nothing on the copy dropped")
        #expect(try server.store.load(made.identifier)?.records.count == 3)
    }

    /// Another request's input reaches the store between this one finding the copy and the copy being set aside:
    /// this request, refused on the released copy before it recorded anything, still runs again.
    @Test func anActionRefusedOnACopySetAsideAfterAnotherRequestsInputIsAnsweredFromTheRestoredSession() async throws {
        let server = Self.node(OrderedClaimsStore())
        let made = try Self.echoSession(on: server, saying: "hello")
        let attempt = try await Self.action(Self.actionRequest(made.identifier, text: "acted"), on: server, holding: made) {
            // The other request: its input is queued for the store after this one took its mark.
            #expect((try? made.pages.perform("text", value: "other", on: "echo").inputNumber) == 3)
            server.dropCopyTakenOver(made.identifier, claim: SessionClaim(order: 9))
        }
        #expect(attempt.response.status == 200, "\(Self.errorCode(attempt.response) ?? "")")
        #expect(server.setAsideReruns.value() == 1, "the request ran again")
        let restored = try #require(server.sessions.peek(made.identifier))
        #expect(attempt.session === restored && attempt.ack.inputNumber == 4)
        #expect(restored.pages.inputNumber == 4, "made, hello, other, acted")
        #expect(try server.store.load(made.identifier)?.records.count == 4)
        #expect(server.actionCounter.value(["echo", "text", "page_not_bound"]) == 0, "the released copy's refusal reached no client")
        #expect(server.actionCounter.value(["echo", "text", "ok"]) == 1)
    }

    @Test func anActionWhoseCopyIsPassivatedUnderItIsAnsweredFromTheRestoredSession() async throws {
        let server = Self.node(OrderedClaimsStore())
        let made = try Self.echoSession(on: server, saying: "hello")
        let attempt = try await Self.action(Self.actionRequest(made.identifier, text: "acted"), on: server, holding: made) {
            if let idle = server.sessions.remove(made.identifier) { server.passivate(idle) }
        }
        #expect(attempt.response.status == 200 && server.setAsideReruns.value() == 1)
        #expect(try server.store.load(made.identifier)?.records.count == 3)
    }

    @Test func anActionWhoseSessionIsDeletedUnderItIsToldTheSessionIsGone() async throws {
        let server = Self.node(OrderedClaimsStore())
        let made = try Self.echoSession(on: server, saying: "hello")
        let attempt = try await Self.action(Self.actionRequest(made.identifier, text: "acted"), on: server, holding: made) {
            if let ended = server.sessions.remove(made.identifier) { server.end(ended, reason: "deleted") }
        }
        guard case .ended = attempt.durability else {
            Issue.record("answered \(attempt.response.status) \(Self.errorCode(attempt.response) ?? ""), not unknown_session")
            return
        }
        #expect(server.setAsideReruns.value() == 0)
        #expect(try server.store.load(made.identifier) == nil)
    }

    /// An event stream whose copy is set aside between finding it and attaching to it: it attaches to the session
    /// restored from the store, not told its session is gone.
    @Test func anEventStreamWhoseCopyIsSetAsideBeforeItAttachesAttachesToTheRestoredSession() async throws {
        let server = Self.node(OrderedClaimsStore())
        let made = try Self.echoSession(on: server, saying: "hello")
        let request = HTTPRequest(
            method: "GET", path: "/api/events", headers: HTTPHeaders([HTTPHeader(name: "X-Session-ID", value: made.identifier)]))
        let started = Locked(false)
        let result = Locked<Result<HTTPResponse, ProtocolError>?>(nil)
        // The stream counts itself against its address between finding the session and attaching to it: held there.
        server.streamsPerAddress.counts.withLock { _ in
            DispatchQueue.global().async {
                started.withLock { $0 = true }
                do throws(ProtocolError) {
                    let response = try server.eventsResponse(request)
                    result.withLock { $0 = .success(response) }
                } catch {
                    result.withLock { $0 = .failure(error) }
                }
            }
            while !started.withLock({ $0 }) { usleep(1_000) }
            usleep(100_000)
            server.dropCopyTakenOver(made.identifier, claim: SessionClaim(order: 9))
        }
        #expect(await TopicFanoutTests.eventually { result.withLock { $0 != nil } })
        guard case .success(let response)? = result.withLock({ $0 }) else {
            Issue.record("the stream was refused: \(String(describing: result.withLock { $0 }))")
            return
        }
        guard case .stream(let stream) = response.body else {
            Issue.record("answered \(response.status), not an event stream")
            return
        }
        #expect(server.setAsideReruns.value() == 1)
        let restored = try #require(server.sessions.peek(made.identifier))
        #expect(restored !== made && restored.openStreamCount == 1 && made.openStreamCount == 0)
        stream.close()
    }

    /// ``PageServer/storedAttempt(_:with:)`` of a handler that finds the session `identifier` as a route does (taking
    /// its mark, and saying whether it records nothing when it throws) and then runs `body` with the attempt's number
    /// (1, and 2 on a rerun), the session and the acknowledgement; with how many attempts ran.
    private static func attempt(
        on server: PageServer, session identifier: String, recordsNothingWhenItThrows: Bool = false,
        _ body: (Int, ServerSession, inout Acknowledgement) throws(ProtocolError) -> HTTPResponse
    ) -> (attempt: StoredAttempt, attempts: Int) {
        var attempts = 0
        let attempt = server.storedAttempt(HTTPRequest(method: "POST", path: "/"), with: { _, ack throws(ProtocolError) in
            attempts += 1
            guard let session = try server.liveSession(identifier) else { throw .unknownSession }
            ack.uses(session, recordsNothingWhenItThrows: recordsNothingWhenItThrows)
            return try body(attempts, session, &ack)
        })
        return (attempt, attempts)
    }

    /// A read of a copy set aside after the request found it: the released copy would show no page at all.
    @Test func aReadOfACopySetAsideUnderItShowsTheRestoredSession() throws {
        let server = Self.node(OrderedClaimsStore())
        let made = try Self.echoSession(on: server, saying: "hello")
        let (attempt, attempts) = Self.attempt(on: server, session: made.identifier) { number, session, ack throws(ProtocolError) in
            // What `GET /api/session` does, with the copy set aside between finding it and reading it the first time.
            if number == 1 { server.dropCopyTakenOver(made.identifier) }
            ack.after(session, input: session.pages.inputNumber)
            return HTTPResponse(status: 200, body: .bytes(Array(String(session.pages.pages.count).utf8)))
        }
        #expect(attempts == 2 && server.setAsideReruns.value() == 1)
        guard case .bytes(let body) = attempt.response.body else { return }
        #expect(body == Array("1".utf8), "the restored session's page, not the released copy's none")
        #expect(attempt.session === server.sessions.peek(made.identifier))
    }

    private static func durability(
        _ session: ServerSession, of number: Int?, since mark: Int?, recordedNothing: Bool = false
    ) -> String {
        switch session.durability(of: number, acceptedSince: mark, recordedNothing: recordedNothing, makingNotification: { { _ in } }) {
        case .stored: "stored"
        case .waiting: "waiting"
        case .failed: "failed"
        case .setAside: "set aside"
        case .ended: "ended"
        }
    }

    @Test func whatARequestDidOnACopyThatLeftMemoryDecidesItsAnswer() throws {
        let server = Self.node(OrderedClaimsStore())
        let copy = try Self.echoSession(on: server, saying: "hello")
        // Found before it was set aside; its input queued (and stored) before: answered as it is.
        let early = copy.acceptedInputMark
        let stored = try copy.pages.perform("text", value: "stored", on: "echo").inputNumber
        let late = copy.acceptedInputMark
        #expect(late == stored && late != early)
        copy.expire(reason: nil)
        #expect(Self.durability(copy, of: stored, since: early) == "stored")
        // Found before, nothing of it queued: run again.
        #expect(Self.durability(copy, of: nil, since: late) == "set aside")
        // Found before another request's input was queued: run again only when it is known to have recorded nothing.
        #expect(Self.durability(copy, of: nil, since: early) == "stored", "it may have recorded the input since")
        #expect(Self.durability(copy, of: nil, since: early, recordedNothing: true) == "set aside")
        #expect(Self.durability(copy, of: stored, since: early, recordedNothing: true) == "stored", "an answer showing its input")
        // Acting on the copy now (a read binds the released page again): its record is refused, so it runs again
        // whatever other records came since.
        let refused = try #require(try copy.pages.read("echo", parameters: [:], asDeepLink: true).inputNumber)
        #expect(copy.acceptedInputMark == late, "no record of a copy set aside is queued")
        #expect(Self.durability(copy, of: refused, since: early) == "set aside")
        #expect(Self.durability(copy, of: refused, since: nil) == "set aside", "even on the second attempt: never 200")
        #expect(try server.store.load(copy.identifier)?.records.count == 3, "made, hello, stored")

        let ended = try Self.echoSession(on: server, saying: "hello")
        let mark = ended.acceptedInputMark
        ended.expire(reason: "deleted")
        #expect(Self.durability(ended, of: nil, since: mark) == "ended")
        #expect(Self.durability(ended, of: nil, since: nil) == "stored", "a request that took no mark answers as it did")
        #expect(Self.durability(ended, of: nil, since: nil, recordedNothing: true) == "ended")

        // A live copy: a request that recorded nothing is answered as it is.
        let live = try Self.echoSession(on: server, saying: "hello")
        #expect(Self.durability(live, of: nil, since: nil, recordedNothing: true) == "stored")
    }

    /// An answer that began to wait for its input's record before the copy left memory, whose record the copy then
    /// refused (another thread was handing the copy's records out): it is told, not left waiting for ever.
    @Test func anAnswerWaitingForARecordTheCopyRefusesIsTold() throws {
        let server = Self.node(OrderedClaimsStore())
        let copy = try Self.echoSession(on: server, saying: "hello")
        let next = copy.pages.inputNumber + 1
        let told = Locked<SessionStoreError??>(nil)
        guard case .waiting = copy.durability(of: next, notify: { failure in told.withLock { $0 = .some(failure) } }) else {
            Issue.record("input \(next) counts as stored before it exists")
            return
        }
        copy.expire(reason: nil)
        let refused = try copy.pages.read("echo", parameters: [:], asDeepLink: true).inputNumber
        #expect(refused == next)
        let outcome = try #require(told.withLock { $0 }, "the waiting answer was never told")
        #expect(outcome?.kind == .outOfOrder)
        #expect(try server.store.load(copy.identifier)?.records.count == 2, "made, hello: the refused input is not stored")
    }

    /// A stored route on a session made on a fresh node, whose handler works on that copy, does `step` and is refused
    /// `page_not_bound`; with how many times the handler ran.
    private static func refusedAttempt(
        _ step: (PageServer, ServerSession) throws(ProtocolError) -> Void
    ) throws -> (attempt: StoredAttempt, attempts: Int, server: PageServer, session: ServerSession) {
        let server = Self.node(OrderedClaimsStore())
        let made = try Self.echoSession(on: server, saying: "hello")
        let (attempt, attempts) = Self.attempt(on: server, session: made.identifier) { _, session, _ throws(ProtocolError) in
            try step(server, session)
            throw ProtocolError(PageError(.pageNotBound, "echo has no live page"))
        }
        return (attempt, attempts, server, made)
    }

    /// A request that may have recorded before it failed (it did not say otherwise), refused on a copy set aside
    /// after another input was queued: it is not run again on the mark's word alone.
    @Test func aRequestThatMayHaveRecordedIsNotRunAgainAfterAnotherInput() throws {
        let server = Self.node(OrderedClaimsStore())
        let made = try Self.echoSession(on: server, saying: "hello")
        let (attempt, attempts) = Self.attempt(on: server, session: made.identifier) { _, session, _ throws(ProtocolError) in
            _ = try? session.pages.perform("text", value: "other", on: "echo")
            server.dropCopyTakenOver(made.identifier)
            throw ProtocolError(PageError(.nothingForward, "nothing forward"))
        }
        #expect(attempts == 1 && attempt.response.status == 409)
    }

    /// A navigation on a copy set aside after another request's input was queued: refused on the released copy
    /// (nothing forward there), it recorded nothing, so it runs again, and goes forward on the restored session.
    @Test func aNavigationRefusedOnACopySetAsideAfterAnotherInputRunsAgain() throws {
        let server = PageServer(units: [.echo, Self.echoOther], root: .echo, store: OrderedClaimsStore())
        let made = try Self.echoSession(on: server, saying: "hello")
        try made.pages.navigate(.open("echo-other"))
        try made.pages.navigate(.back)
        #expect(made.pages.navigation.forward == ["echo-other"])
        let (attempt, attempts) = Self.attempt(on: server, session: made.identifier, recordsNothingWhenItThrows: true) {
            number, session, ack throws(ProtocolError) in
            // What `POST /api/navigation` does with `forward`, with another request's input queued and the copy set
            // aside between finding it and navigating the first time.
            if number == 1 {
                _ = try? session.pages.perform("text", value: "other", on: "echo")
                server.dropCopyTakenOver(made.identifier, claim: SessionClaim(order: 9))
            }
            do throws(PageError) {
                let result = try session.pages.navigate(.forward, noting: &ack.receipt)
                ack.after(session, input: result.inputNumber)
                return HTTPResponse(status: 200, body: .bytes(Array(result.state.stack.joined(separator: ",").utf8)))
            } catch {
                throw ProtocolError(error)
            }
        }
        #expect(attempts == 2 && server.setAsideReruns.value() == 1)
        #expect(attempt.response.status == 200, "\(Self.errorCode(attempt.response) ?? "")")
        let restored = try #require(server.sessions.peek(made.identifier))
        #expect(restored.pages.navigation.stack == ["echo", "echo-other"])
        #expect(try server.store.load(made.identifier)?.records.count == 6, "made, hello, open, back, other, forward")
    }

    /// A handler whose page-session step recorded an input (queued for the store) and that then failed, on a copy
    /// set aside in between: its receipt says so, and it is answered as it failed, not run again (its input is
    /// stored: a second run would apply it twice).
    @Test func aRequestThatRecordedAndThenFailedIsNotRunAgain() throws {
        let server = Self.node(OrderedClaimsStore())
        let made = try Self.echoSession(on: server, saying: "hello")
        let (attempt, attempts) = Self.attempt(on: server, session: made.identifier, recordsNothingWhenItThrows: true) {
            _, session, ack throws(ProtocolError) in
            do throws(PageError) {
                try session.pages.perform("text", value: "recorded", on: "echo", noting: &ack.receipt)
            } catch {
                throw ProtocolError(error)
            }
            server.dropCopyTakenOver(made.identifier, claim: SessionClaim(order: 9))
            throw ProtocolError(PageError(.bindingFailed, "failed after it recorded"))
        }
        #expect(attempts == 1 && attempt.response.status == 500)
        #expect(server.setAsideReruns.value() == 0)
        #expect(try server.store.load(made.identifier)?.records.count == 3, "made, hello, recorded: once")
    }

    /// The action and navigation routes, refused on a live session, say that their refusal recorded nothing (what
    /// lets them run again on a copy set aside under them); a navigation that recorded says nothing of the kind.
    @Test func theRoutesSayWhetherTheirRefusalRecordedAnInput() throws {
        let server = PageServer(units: [.echo, Self.echoOther], root: .echo, store: OrderedClaimsStore())
        let made = try Self.echoSession(on: server, saying: "hello")
        func post(_ path: String, _ body: String) -> HTTPRequest {
            var request = HTTPRequest(
                method: "POST", path: path,
                headers: HTTPHeaders([
                    HTTPHeader(name: "X-Session-ID", value: made.identifier),
                    HTTPHeader(name: "Content-Type", value: "application/json"),
                ]),
                body: Array(body.utf8))
            request.pathParameters = ["unit": "echo"]
            return request
        }
        var action = Acknowledgement()
        let unknownAction = #expect(throws: ProtocolError.self) {
            try server.actionResponse(post("/api/pages/echo/actions", #"{"action":"nowhere"}"#), &action)
        }
        #expect(unknownAction?.code == "unknown_action")
        #expect(action.session === made && action.recordsNothingWhenItThrows)
        var forward = Acknowledgement()
        let nothingForward = #expect(throws: ProtocolError.self) {
            try server.navigationResponse(post("/api/navigation", #"{"type":"forward"}"#), &forward)
        }
        #expect(nothingForward?.code == "nothing_forward")
        #expect(forward.session === made && forward.recordsNothingWhenItThrows)
        var opened = Acknowledgement()
        _ = try server.navigationResponse(post("/api/navigation", #"{"type":"open","unit":"echo-other"}"#), &opened)
        #expect(!forward.receipt.recordedAnInput && opened.receipt.recordedAnInput, "the route's steps are noted")
        #expect(opened.inputNumber == made.pages.inputNumber, "the answer shows its own input")
        #expect(made.pages.inputNumber == 3)
    }

    /// A second page for navigations.
    private static let echoOther = UnitCase("echo-other", view: EchoView.self, viewModel: EchoViewModel.self)

    @Test func aRequestRefusedOnALiveSessionIsNotRunAgain() throws {
        let refused = try Self.refusedAttempt { _, _ in }
        #expect(refused.attempt.response.status == 409 && refused.attempts == 1)
    }

    @Test func aRequestWhoseInputWasQueuedBeforeTheCopyWasSetAsideIsNotRunAgain() throws {
        let refused = try Self.refusedAttempt { server, made throws(ProtocolError) in
            do throws(PageError) {
                // Its record is queued (and stored), then the copy is set aside, then the request fails.
                _ = try made.pages.perform("text", value: "recorded", on: "echo")
            } catch {
                throw ProtocolError(error)
            }
            server.dropCopyTakenOver(made.identifier)
        }
        #expect(refused.attempts == 1 && refused.attempt.response.status == 409, "running it again would apply its input twice")
        #expect(try refused.server.store.load(refused.session.identifier)?.records.count == 3)
    }
}
