import Dispatch
import Locking
import MicroHTTP
import Testing

// A deferred handler answers at once, or later from another thread (a store's writer), with the connection
// suspended meanwhile. Named `…ConcurrencyTests` so that CI runs it under ThreadSanitizer.

@Suite(.tags(.concurrency)) struct DeferredHandlerConcurrencyTests {
    private static func router(laterDelay: Duration = .milliseconds(30)) -> HTTPRouter {
        var router = HTTPRouter()
        router.add("GET", "/now", .deferred { _, _ in .text("now") })
        router.add("GET", "/later/{value}", .deferred { request, responder in
            let value = request.pathParameters["value"] ?? ""
            let milliseconds = Int(laterDelay.components.seconds) * 1000 + Int(laterDelay.components.attoseconds / 1_000_000_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
                responder.respond(.text("later:" + value))
            }
            return nil
        })
        router.add("GET", "/during", .deferred { _, responder in
            // Answered through the responder before the handler even returns.
            responder.respond(.text("during"))
            return nil
        })
        router.add("GET", "/twice", .deferred { _, responder in
            DispatchQueue.global().async {
                responder.respond(.text("first"))
                responder.respond(.text("second"))
            }
            return nil
        })
        router.add("GET", "/throws", .deferred { _, _ in throw HTTPError.notFound })
        return router
    }

    @Test func answersAtOnceLaterDuringAndOnlyOnce() async throws {
        try await withServer(router: Self.router()) { server in
            let port = server.port
            try await blocking {
                #expect(try RawHTTP.request(port: port, "GET", "/now").text == "now")
                #expect(try RawHTTP.request(port: port, "GET", "/later/x").text == "later:x")
                #expect(try RawHTTP.request(port: port, "GET", "/during").text == "during")
                #expect(try RawHTTP.request(port: port, "GET", "/twice").text == "first")
                #expect(try RawHTTP.request(port: port, "GET", "/throws").status == 404)
                // Keep-alive: a connection answered later serves the next request too.
                let connection = try RawConnection(port: port)
                #expect(try connection.request("GET", "/later/a").text == "later:a")
                #expect(try connection.request("GET", "/now").text == "now")
                #expect(try connection.request("GET", "/later/b").text == "later:b")
                connection.close()
            }
            #expect(await eventually { server.activeRequestCount == 0 })
        }
    }

    @Test func manyDeferredAnswersFromOtherThreadsReachTheirOwnClients() async throws {
        let threads = 8
        let perThread = 40
        try await withServer(router: Self.router(laterDelay: .milliseconds(1))) { server in
            let port = server.port
            let wrong = try await withThrowingTaskGroup(of: Int.self) { group in
                for thread in 0..<threads {
                    group.addTask {
                        try await blocking { () throws -> Int in
                            let connection = try RawConnection(port: port)
                            defer { connection.close() }
                            var wrong = 0
                            for index in 0..<perThread {
                                let value = "t\(thread)r\(index)"
                                let target = index % 2 == 0 ? "/later/\(value)" : "/during"
                                let expected = index % 2 == 0 ? "later:\(value)" : "during"
                                if try connection.request("GET", target).text != expected { wrong += 1 }
                            }
                            return wrong
                        }
                    }
                }
                var total = 0
                for try await count in group { total += count }
                return total
            }
            #expect(wrong == 0)
            #expect(await eventually { server.activeRequestCount == 0 })
        }
    }

    @Test func whatAnAnswerKeepsIsReleasedOnceSentAndWhenItsClientLeftFirst() async throws {
        let released = Locked(0)
        let answers = Locked([DeferredResponder]())
        var router = HTTPRouter()
        // Like the session store's answers: what is kept holds the responder, which holds the request's context.
        router.add("GET", "/kept", .deferred { _, responder in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) {
                responder.respond(.text("kept"), keepingUntilSent: ReleaseProbe(responder: responder, released: released))
            }
            return nil
        })
        // Answered only when the test says so, after its client left.
        router.add("GET", "/held", .deferred { _, responder in
            answers.withLock { $0.append(responder) }
            return nil
        })
        try await withServer(router: router) { server in
            let port = server.port
            try await blocking {
                #expect(try RawHTTP.request(port: port, "GET", "/kept").text == "kept")
                let connection = try RawConnection(port: port)
                #expect(try connection.request("GET", "/kept").text == "kept")
                #expect(try connection.request("GET", "/kept").text == "kept")
                connection.close()
            }
            #expect(await eventually { released.withLock { $0 } == 3 })

            // The client goes before the answer comes: the answer is never sent, and what it kept goes all the same.
            let leaving = try await blocking { () throws -> RawConnection in
                let leaving = try RawConnection(port: port)
                try leaving.send(RawConnection.requestBytes("GET", "/held", headers: [], keepAlive: true))
                return leaving
            }
            #expect(await eventually { answers.withLock { $0.count } == 1 })
            leaving.close()
            let responder = try #require(answers.withLock { $0.popLast() })
            responder.respond(.text("too late"), keepingUntilSent: ReleaseProbe(responder: responder, released: released))
            #expect(await eventually { released.withLock { $0 } == 4 })
            #expect(await eventually { server.activeRequestCount == 0 })
        }
    }

    /// A request answered at once never waits, so it is never listed for `stop`; one whose answer is still to come
    /// when the grace period ends is answered 503 `draining` by the server, and its handler's late answer is dropped.
    @Test func aDeferredRequestStillWaitingWhenTheGracePeriodEndsGets503AndItsLateAnswerIsDropped() async throws {
        let answers = Locked([DeferredResponder]())
        var router = HTTPRouter()
        router.add("GET", "/now", .deferred { _, _ in .text("now") })
        router.add("GET", "/held", .deferred { _, responder in
            answers.withLock { $0.append(responder) }
            return nil
        })
        try await withServer(router: router) { server in
            let port = server.port
            #expect(try await blocking { try RawHTTP.request(port: port, "GET", "/now").text } == "now")
            let inFlight = Task { try await blocking { try RawHTTP.request(port: port, "GET", "/held", timeout: .seconds(10)) } }
            #expect(await eventually { answers.withLock { $0.count } == 1 })
            let took = await timedStop(server, gracePeriod: .milliseconds(200))
            let response = try await inFlight.value
            #expect(response.status == 503)
            #expect(errorCode(response) == "draining")
            #expect(took < .seconds(2), "the request answered at once was not left waiting")
            let responder = try #require(answers.withLock { $0.popLast() })
            responder.respond(.text("too late"))
            #expect(server.activeRequestCount == 0)
        }
    }
}

/// Counts its own release; holds a responder, as a session store's answer does.
private final class ReleaseProbe: Sendable {
    let responder: DeferredResponder
    let released: Locked<Int>

    init(responder: DeferredResponder, released: Locked<Int>) {
        self.responder = responder
        self.released = released
    }

    deinit { released.withLock { $0 += 1 } }
}
