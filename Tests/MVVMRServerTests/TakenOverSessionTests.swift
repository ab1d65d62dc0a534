import JSONPatch
import Locking
import MVVMR
import MicroHTTP
import Testing

@testable import MVVMRServer

/// A store shared by two nodes in one process, whose claims have an order, as JetStream's do.
final class OrderedClaimsStore: ForwardingSessionStore {
    let inner = MemorySessionStore()
    private let lastOrder = Locked<UInt64>(0)

    func claim(_ session: String, asLoaded stored: StoredSession) throws(SessionStoreError) -> SessionClaim? {
        SessionClaim(order: lastOrder.withLock { order in
            order += 1
            return order
        })
    }
}

/// A node drops its copy of a session when another node announces a later claim of it, not an earlier one; and a
/// request that found the copy just before it was dropped is answered from the session as the store has it.
@Suite struct TakenOverSessionTests {
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

        // The second node's notice again, late (it waited for the restore's lock): the first node's copy is newer.
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

    /// The action route's steps: find the session, then act on it (with the test's step between the two).
    private static func act(
        on server: PageServer, _ identifier: String, _ ack: inout Acknowledgement, between: () -> Void
    ) throws(ProtocolError) -> HTTPResponse {
        guard let session = try server.liveSession(identifier) else { throw .unknownSession }
        ack.uses(session)
        between()
        do throws(PageError) {
            let result = try session.pages.perform("text", value: "acted", on: "echo")
            ack.after(session, input: result.inputNumber)
            return HTTPResponse(status: 200, body: .bytes(result.responseBody))
        } catch {
            throw ProtocolError(error)
        }
    }

    private static func errorCode(_ response: HTTPResponse) -> String? {
        guard case .bytes(let body) = response.body, let json = try? JSONValue(parsing: body) else { return nil }
        return json["error"]?["code"]?.stringValue
    }

    @Test func aRequestWhoseCopyIsTakenOverUnderItActsOnTheSessionRestored() throws {
        let store = OrderedClaimsStore()
        let server = Self.node(store)
        let made = try Self.echoSession(on: server, saying: "hello")
        let request = HTTPRequest(method: "POST", path: "/api/pages/echo/actions")
        var attempts = 0
        var ack = Acknowledgement()
        let response = PageServer.answer(request, with: { request, ack throws(ProtocolError) in
            attempts += 1
            return try Self.act(on: server, made.identifier, &ack) {
                // Another node's notice, between the route finding the copy and acting on it.
                if attempts == 1 { server.dropCopyTakenOver(made.identifier, claim: SessionClaim(order: 9)) }
            }
        }, acknowledging: &ack)
        #expect(response.status == 200, "\(Self.errorCode(response) ?? "")")
        #expect(attempts == 2)
        let restored = try #require(server.sessions.peek(made.identifier))
        #expect(restored !== made && ack.session === restored && ack.inputNumber == 3)
        #expect(restored.pages.inputNumber == 3, "made, hello, acted: the input once, on the restored copy")
        #expect(made.pages.inputNumber == 2, "nothing on the copy dropped")
    }

    @Test func aRequestWhoseCopyIsPassivatedUnderItActsOnTheSessionRestored() throws {
        let server = Self.node(OrderedClaimsStore())
        let made = try Self.echoSession(on: server, saying: "hello")
        var attempts = 0
        var ack = Acknowledgement()
        let response = PageServer.answer(HTTPRequest(method: "POST", path: "/"), with: { request, ack throws(ProtocolError) in
            attempts += 1
            return try Self.act(on: server, made.identifier, &ack) {
                if attempts == 1, let idle = server.sessions.remove(made.identifier) { server.passivate(idle) }
            }
        }, acknowledging: &ack)
        #expect(response.status == 200 && attempts == 2)
    }

    @Test func aRequestWhoseSessionEndedUnderItIsNotRunAgain() throws {
        let server = Self.node(OrderedClaimsStore())
        let made = try Self.echoSession(on: server, saying: "hello")
        var attempts = 0
        var ack = Acknowledgement()
        let response = PageServer.answer(HTTPRequest(method: "POST", path: "/"), with: { request, ack throws(ProtocolError) in
            attempts += 1
            return try Self.act(on: server, made.identifier, &ack) {
                // Deleted (or expired): gone from the store too; the refusal stands.
                if let ended = server.sessions.remove(made.identifier) { server.end(ended, reason: "deleted") }
            }
        }, acknowledging: &ack)
        #expect(response.status == 409 && Self.errorCode(response) == "page_not_bound" && attempts == 1)
    }

    @Test func aRequestRefusedOnALiveSessionIsNotRunAgain() throws {
        let server = Self.node(OrderedClaimsStore())
        let made = try Self.echoSession(on: server, saying: "hello")
        var attempts = 0
        var ack = Acknowledgement()
        let response = PageServer.answer(HTTPRequest(method: "POST", path: "/"), with: { request, ack throws(ProtocolError) in
            attempts += 1
            ack.uses(made)
            throw ProtocolError(PageError(.pageNotBound, "elsewhere has no live page"))
        }, acknowledging: &ack)
        #expect(response.status == 409 && attempts == 1)
    }
}
