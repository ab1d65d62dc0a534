import Foundation
import JSONPatch
import MVVMRServer
import Testing

@testable import MVVMRClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The client against a real in-process page server.
@Suite(.timeLimit(.minutes(1)))
struct PageClientTests {
    @Test func drivesAPageEndToEnd() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        let recorder = ChangeRecorder(client)

        let first = try await client.openSession(at: "counter")
        let session = try #require(client.sessionID)
        #expect(first.unit == "counter")
        #expect(first.rev == 0)
        #expect(first.view == ["count": 0])
        #expect(first.actions.contains(ClientAction(name: "increment", valueType: "none")))
        #expect(first.actions.contains(ClientAction(name: "add", valueType: "int")))
        #expect(client.navigation == PageNavigation(stack: ["counter"], presented: nil))
        #expect(client.topPage == first)

        let receipt = try await client.send("increment")
        #expect(receipt.unit == "counter")
        #expect(receipt.rev == 1)
        #expect(!receipt.replayed)
        #expect(client.page("counter")?.view == ["count": 1])
        #expect(client.page("counter")?.rev == 1)

        try await client.send("add", value: 41, to: "counter")
        let local = try #require(client.page("counter"))
        let fresh = try await server.fetchPage("counter", session: session)
        #expect(local.rev == 2)
        #expect(local.rev == fresh.rev)
        #expect(local.view == fresh.view)
        #expect(local.view == ["count": 42])
        #expect(server.deliveries.value == 2)

        // A page bound by GET joins the client's pages without moving the navigation.
        let forecast = try await client.load("forecast")
        #expect(forecast.view == ["forecast": "unknown"])
        #expect(client.pages.keys.sorted() == ["counter", "forecast"])
        #expect(client.navigation.stack == ["counter"])

        // Protocol errors come back as they are, never retried.
        await #expect(throws: PageClientError.self) { try await client.send("explode") }
        do {
            try await client.send("add", value: "many")
            Issue.record("an invalid value was accepted")
        } catch PageClientError.server(let info) {
            #expect(info.status == 422)
            #expect(info.code == "invalid_value")
        }
        #expect(client.page("counter")?.rev == 2)
        #expect(recorder.contains { $0 == .sessionOpened(session) })
        #expect(recorder.contains { $0 == .pageChanged("counter") })
        try await client.closeSession()
        #expect(client.sessionID == nil)
    }

    @Test func asyncWorkArrivesOverServerSentEvents() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        defer { client.stopEvents() }
        try await client.openSession(at: "forecast")
        let session = try #require(client.sessionID)
        client.startEvents()
        try await waitUntil("the event stream") { client.isEventStreamConnected }

        let receipt = try await client.send("refresh")
        // The action itself changes nothing: the forecast comes later, from the async call, over SSE.
        #expect(receipt.rev == 0)
        #expect(client.page("forecast")?.view == ["forecast": "unknown"])
        try await waitUntil("the forecast over SSE") { client.page("forecast")?.view == ["forecast": "sunny"] }
        let local = try #require(client.page("forecast"))
        let fresh = try await server.fetchPage("forecast", session: session)
        #expect(local.rev == 1)
        #expect(local.rev == fresh.rev)
        #expect(local.view == fresh.view)
        #expect(client.state.withLock { $0.diagnostics.resyncs } == 0)
    }

    @Test func resumesAfterADropWithLastEventIDWithoutMissingEvents() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        defer { client.stopEvents() }
        let first = try await client.openSession(at: "ticker")
        let session = try #require(client.sessionID)
        #expect(first.view == ["ticks": 0])
        client.startEvents()

        @Sendable func ticks() -> Int { client.page("ticker")?.view["ticks"]?.intValue ?? -1 }
        try await waitUntil("a few ticks") { ticks() >= 5 }

        // The connection drops (as a network failure would): the client reconnects by itself.
        let beforeDrop = try #require(client.lastEventID)
        client.dropEventStreamConnection()
        try await waitUntil("ticks after the drop") { ticks() >= 15 }

        // Stopped for a while: the ticks go on on the server; they are replayed on resume.
        client.stopEvents()
        let whenStopped = ticks()
        let lastSeen = try #require(client.lastEventID)
        try await Task.sleep(nanoseconds: 400_000_000)
        #expect(ticks() == whenStopped)
        client.startEvents()
        try await waitUntil("every tick", timeout: 10) { ticks() == TickerViewModel.lastTick }

        let local = try #require(client.page("ticker"))
        let fresh = try await server.fetchPage("ticker", session: session)
        #expect(local.view == fresh.view)
        #expect(local.rev == fresh.rev)
        #expect(local.rev == TickerViewModel.lastTick)
        let diagnostics = client.state.withLock { $0.diagnostics }
        // Every patch applied in order, from the rev held: no gap, hence no resync.
        #expect(diagnostics.resyncs == 0)
        #expect(diagnostics.connections >= 3)
        #expect(diagnostics.lastEventIDsSent.count == diagnostics.connections)
        let sent = diagnostics.lastEventIDsSent.compactMap { $0 }
        #expect(sent.count == diagnostics.connections)
        #expect(sent.contains { $0 >= beforeDrop })
        #expect(sent.last == lastSeen)
    }

    @Test func aRetriedActionIsDeliveredOnce() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let transport = FlakyTransport()
        let client = try server.client(transport: transport)
        try await client.openSession(at: "counter")
        let session = try #require(client.sessionID)

        // The server handles the action but the answer is lost twice: the client retries with the same key.
        transport.loseAnswers(2)
        let receipt = try await client.send("increment")
        #expect(receipt.replayed)
        #expect(receipt.rev == 1)
        #expect(server.deliveries.value == 1)
        let attempts = transport.records.filter { $0.path.hasSuffix("/actions") }
        #expect(attempts.count == 3)
        #expect(attempts.map(\.failure) == ["lost", "lost", nil])
        let keys = Set(attempts.compactMap(\.idempotencyKey))
        #expect(keys.count == 1)
        #expect(client.page("counter")?.view == ["count": 1])

        // 503 with Retry-After: retried (nothing reached the server), then delivered once.
        transport.answerUnavailable(1)
        let second = try await client.send("add", value: 2)
        #expect(!second.replayed)
        #expect(server.deliveries.value == 2)
        #expect(client.page("counter")?.view == ["count": 3])
        let fresh = try await server.fetchPage("counter", session: session)
        #expect(fresh.view == ["count": 3])

        // Another logical action gets another key.
        let allKeys = Set(transport.records.compactMap(\.idempotencyKey))
        #expect(allKeys.count == 2)

        // A 4xx is never retried.
        let before = transport.records.count
        await #expect(throws: PageClientError.self) { try await client.send("nope") }
        #expect(transport.records.count == before + 1)

        // An explicit key reused is a replay too (exactly-once across app restarts).
        let key = UUID().uuidString
        try await client.send("increment", idempotencyKey: key)
        #expect(server.deliveries.value == 3)
        // The same key with another body (the rev moved on) is refused, not delivered.
        do {
            try await client.send("increment", idempotencyKey: key)
            Issue.record("a reused key with another body was accepted")
        } catch PageClientError.server(let info) {
            #expect(info.status == 422)
            #expect(info.code == "idempotency_key_reused")
        }
        #expect(server.deliveries.value == 3)
    }

    @Test func recoversAtThePageItWasOnAfterAServerRestart() async throws {
        // A fixed free port: the one a first server got.
        var server = try TestServer()
        let port = server.port
        let client = try server.client()
        defer { client.stopEvents() }
        let recorder = ChangeRecorder(client)
        try await client.openSession()
        #expect(client.navigation.stack == ["home"])
        try await client.send("edit")
        #expect(client.navigation.stack == ["home", "editor"])
        let lost = try #require(client.sessionID)
        client.startEvents()
        try await waitUntil("the event stream") { client.isEventStreamConnected }

        server.stop()
        server = try TestServer(port: port)
        defer { server.stop() }

        try await waitUntil("a new session", timeout: 10) {
            recorder.contains { if case .sessionRecovered = $0 { true } else { false } }
        }
        let recovered = try #require(client.sessionID)
        #expect(recovered != lost)
        #expect(recorder.contains { $0 == .sessionRecovered(recovered) })
        #expect(client.navigation.stack == ["editor"])
        #expect(client.topPage?.unit == "editor")
        #expect(client.page("home") == nil)
        try await waitUntil("the stream of the new session") { client.isEventStreamConnected }
        let fresh = try await server.fetchPage("editor", session: recovered)
        #expect(client.page("editor")?.view == fresh.view)
        // The new session works.
        try await client.send("cancel")
        #expect(client.navigation.stack.isEmpty || client.navigation.stack == ["editor"])
    }

    @Test func recoversWhenTheSessionEndsOrIsUnknown() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        defer { client.stopEvents() }
        let recorder = ChangeRecorder(client)
        try await client.openSession(at: "counter")
        try await client.send("increment")

        // An action in an unknown session: 404 unknown_session, a new session at the page, reported.
        let first = try #require(client.sessionID)
        try await server.deleteSession(first)
        do {
            try await client.send("increment")
            Issue.record("an action in a deleted session succeeded")
        } catch PageClientError.sessionRecovered(let session) {
            #expect(session != first)
            #expect(client.sessionID == session)
        }
        #expect(client.page("counter")?.view == ["count": 0])
        #expect(client.navigation.stack == ["counter"])
        let second = try #require(client.sessionID)

        // An `expired` event on the stream: the same.
        client.startEvents()
        try await waitUntil("the event stream") { client.isEventStreamConnected }
        try await server.deleteSession(second)
        try await waitUntil("a second new session") { client.sessionID != second && client.sessionID != nil }
        let third = try #require(client.sessionID)
        // The recorder reads the client's changes in a task of its own: wait for it to see them.
        try await waitUntil("both recoveries reported") {
            recorder.contains { $0 == .sessionRecovered(second) } && recorder.contains { $0 == .sessionRecovered(third) }
        }
        #expect(client.page("counter")?.rev == 0)
        try await waitUntil("the stream of the new session") { client.isEventStreamConnected }
        try await client.send("increment")
        #expect(client.page("counter")?.view == ["count": 1])
    }

    @Test func navigatesWithPushAndBackWithACallbackValue() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        defer { client.stopEvents() }
        let recorder = ChangeRecorder(client)
        let home = try await client.openSession()
        let session = try #require(client.sessionID)
        #expect(home.unit == "home")
        #expect(home.view == ["user": "nobody"])
        client.startEvents()
        try await waitUntil("the event stream") { client.isEventStreamConnected }

        // Push, sending the current user to the editor.
        let pushed = try await client.send("edit")
        let push = try #require(pushed.navigation)
        #expect(push.kind == .push)
        #expect(push.unit == "editor")
        #expect(client.navigation == PageNavigation(stack: ["home", "editor"], presented: nil))
        #expect(client.topPage?.unit == "editor")
        #expect(client.page("editor")?.view == ["original": "nobody"])
        #expect(client.page("home") != nil)

        // Back with a callback value: the page below shows it.
        let saved = try await client.send("save", value: "Ada")
        let back = try #require(saved.navigation)
        #expect(back.kind == .back)
        #expect(client.navigation == PageNavigation(stack: ["home"], presented: nil, forward: ["editor"]))
        #expect(client.page("editor") == nil)
        #expect(client.page("home")?.view == ["user": "Ada"])
        let fresh = try await server.fetchPage("home", session: session)
        #expect(client.page("home")?.view == fresh.view)
        #expect(client.page("home")?.rev == fresh.rev)

        // The events of the same changes, arriving over SSE too, change nothing and are not reported twice.
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(client.page("home")?.view == ["user": "Ada"])
        #expect(client.navigation.stack == ["home"])
        let navigations = recorder.changes.compactMap { change -> PageNavigationKind? in
            if case .navigated(let navigation) = change { navigation.kind } else { nil }
        }
        // The new session is reported as a root navigation; the SSE duplicates are not reported.
        #expect(navigations == [.root, .push, .back])
        #expect(recorder.contains { $0 == .pageRemoved("editor") })

        // The editor again, then a client-initiated back (no callback value).
        try await client.send("edit", to: "home")
        #expect(client.page("editor")?.view == ["original": "Ada"])
        let popped = try #require(try await client.goBack())
        #expect(popped.kind == .back)
        #expect(client.navigation.stack == ["home"])
        #expect(client.page("home")?.view == ["user": "Ada"])
        #expect(client.state.withLock { $0.diagnostics.resyncs } == 0)

        // open: pushes a unit not on the stack.
        let opened = try #require(try await client.open("counter"))
        #expect(opened.kind == .push)
        #expect(client.navigation.stack == ["home", "counter"])
        #expect(client.topPage?.view == ["count": 0])
    }

    @Test func resyncsAPageAfterAGap() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        try await client.openSession(at: "counter")
        let session = try #require(client.sessionID)
        // Another client of the same session moves the page on; this one does not follow events.
        var request = URLRequest(url: try server.baseURL.appendingPathComponent("api/pages/counter/actions"))
        request.httpMethod = "POST"
        request.setValue(session, forHTTPHeaderField: "X-Session-ID")
        request.httpBody = Data(#"{"action":"add","value":10}"#.utf8)
        _ = try await URLSession.shared.data(for: request)
        #expect(client.page("counter")?.rev == 0)
        // Its next action names rev 0: the answer patches from 0 to 2 and the client applies it.
        try await client.send("increment")
        #expect(client.page("counter")?.view == ["count": 11])
        #expect(client.page("counter")?.rev == 2)
        // An event patch with a gap makes it GET the page.
        // (the client forgets it: without Last-Event-ID, the stream starts with the next event.)
        client.state.withLock { state in
            state.pages["counter"]?.rev = 0
            state.pages["counter"]?.view = ["count": 0]
            state.lastEventID = nil
        }
        client.startEvents()
        defer { client.stopEvents() }
        try await waitUntil("the event stream") { client.isEventStreamConnected }
        _ = try await URLSession.shared.data(for: request)
        try await waitUntil("the resync") { client.page("counter")?.view == ["count": 21] }
        #expect(client.page("counter")?.rev == 3)
        #expect(client.state.withLock { $0.diagnostics.resyncs } >= 1)
    }

    @Test func theStreamStaysUpAcrossHeartbeats() async throws {
        let server = try TestServer()
        defer { server.stop() }
        var configuration = PageClientConfiguration()
        configuration.eventStreamIdleTimeout = 2.5
        configuration.maxReconnectDelay = 0.3
        let client = PageClient(baseURL: try server.baseURL, configuration: configuration)
        defer { client.stopEvents() }
        try await client.openSession(at: "counter")
        client.startEvents()
        try await waitUntil("the event stream") { client.isEventStreamConnected }
        // Longer than the idle timeout; the server's pings (every second here) keep the stream alive.
        try await Task.sleep(nanoseconds: 4_000_000_000)
        #expect(client.state.withLock { $0.diagnostics.connections } == 1)
        #expect(client.isEventStreamConnected)
        try await client.send("increment")
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(client.state.withLock { $0.diagnostics.eventsReceived } >= 1)
    }
}
