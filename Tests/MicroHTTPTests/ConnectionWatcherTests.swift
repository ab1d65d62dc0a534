import Locking
import Testing

@testable import MicroHTTP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Sends `bytes` one at a time, `interval` apart, until the server closes the connection or `limit` passes.
/// Returns how long after the first byte the connection was closed, or `nil` when it stayed open.
private func trickle(_ bytes: [UInt8], on connection: RawConnection, every interval: Duration, limit: Duration) -> Duration? {
    let start = ContinuousClock.now
    var index = 0
    while ContinuousClock.now - start < limit {
        if index < bytes.count {
            do { try connection.send([bytes[index]]) } catch { return ContinuousClock.now - start }
            index += 1
        }
        let closing = connection.waitForClose(timeout: interval)
        if closing.closed { return ContinuousClock.now - start }
    }
    return nil
}

private var deadlineRouter: HTTPRouter {
    var router = HTTPRouter()
    router.get("/ping") { _ in .text("pong") }
    router.add("POST", "/upload", .synchronous { request in .text("\(request.body.count)") })
    router.add(
        "GET", "/slow",
        .asynchronous { _ in
            try await Task.sleep(for: .milliseconds(2500))
            return .text("late")
        })
    return router
}

@Suite(.tags(.concurrency)) struct RequestDeadlineConcurrencyTests {
    @Test func aHeaderTrickledOneByteAtATimeIsCutAtTheHeaderDeadline() async throws {
        // The inactivity timeout (30 s) never fires: a byte arrives every 300 ms.
        try await withServer(router: deadlineRouter, configure: {
            $0.connectionTimeoutSeconds = 30
            $0.requestHeaderTimeoutSeconds = 1
        }) { server in
            let port = server.port
            let cutAfter = try await blocking { () throws -> Duration? in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                return trickle(Array("GET /ping HTTP/1.1\r\nHost: x\r\nX-Slow: \(String(repeating: "a", count: 40))".utf8),
                               on: connection, every: .milliseconds(300), limit: .seconds(5))
            }
            let elapsed = try #require(cutAfter, "the trickling connection stayed open for 5 s")
            #expect(elapsed >= .milliseconds(900))
            #expect(elapsed < .milliseconds(2000))
            #expect(server.connectionsCutForDeadline >= 1)
        }
    }

    @Test func aBodyTrickledOneByteAtATimeIsCutAtTheBodyDeadlineNotTheHeaderOne() async throws {
        try await withServer(router: deadlineRouter, configure: {
            $0.connectionTimeoutSeconds = 30
            $0.requestHeaderTimeoutSeconds = 1
            $0.requestBodyTimeoutSeconds = 2
        }) { server in
            let port = server.port
            let cutAfter = try await blocking { () throws -> Duration? in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                try connection.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
                return trickle(Array(repeating: UInt8(ascii: "b"), count: 100), on: connection, every: .milliseconds(300),
                               limit: .seconds(6))
            }
            let elapsed = try #require(cutAfter, "the trickling body stayed open for 6 s")
            #expect(elapsed >= .milliseconds(1800))
            #expect(elapsed < .milliseconds(3000))
        }
    }

    @Test func anIdleKeepAliveConnectionWaitsForItsNextRequestOnlyUntilTheHeaderDeadline() async throws {
        try await withServer(router: deadlineRouter, configure: {
            $0.connectionTimeoutSeconds = 30
            $0.requestHeaderTimeoutSeconds = 1
        }) { server in
            let port = server.port
            let (statuses, closing) = try await blocking { () throws -> ([Int], CloseObservation) in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                // Each request gets a fresh header deadline: three requests 600 ms apart outlast one deadline.
                var statuses: [Int] = []
                for _ in 0..<3 {
                    statuses.append(try connection.request("GET", "/ping").status)
                    usleep(600_000)
                }
                return (statuses, connection.waitForClose(timeout: .seconds(5)))
            }
            #expect(statuses == [200, 200, 200])
            #expect(closing.closed)
            #expect(closing.bytes.isEmpty)
            #expect(closing.elapsed < .milliseconds(1500))
        }
    }

    /// Half-sent requests closed by their clients right around their deadline free descriptor numbers that new
    /// connections take at once; were a cut ever aimed at a number after the library closed it, one of the fast
    /// requests on those new connections would fail.
    @Test func cutsRacingClientClosesNeverHitAnotherConnection() async throws {
        try await withServer(router: deadlineRouter, configure: {
            $0.connectionTimeoutSeconds = 30
            $0.requestHeaderTimeoutSeconds = 1
        }) { server in
            let port = server.port
            let racing = Task {
                try await blocking { () throws -> Void in
                    for round in 0..<3 {
                        let half = try (0..<20).map { _ in try RawConnection(port: port) }
                        for connection in half { try connection.send("GET /pi") }
                        // Close them over 950-1,350 ms, longer than the watcher's 250 ms tick, so that every round
                        // has some closed before their cut, some during it and some after (at least one is cut).
                        usleep(950_000)
                        for (index, connection) in half.enumerated() {
                            if index % 2 == round % 2 { connection.reset() } else { connection.close() }
                            usleep(20_000)
                        }
                    }
                }
            }
            let (answered, failed) = await blocking { () -> (Int, [String]) in
                var answered = 0
                var failed: [String] = []
                let deadline = ContinuousClock.now + .milliseconds(4200)
                while ContinuousClock.now < deadline {
                    do {
                        let response = try RawHTTP.request(port: port, "GET", "/ping")
                        if response.status == 200 { answered += 1 } else { failed.append("status \(response.status)") }
                    } catch {
                        failed.append("\(error)")
                    }
                }
                return (answered, failed)
            }
            try await racing.value
            #expect(failed.isEmpty, "\(failed.prefix(3))")
            #expect(answered > 100)
            #expect(server.connectionsCutForDeadline > 0)
        }
    }

    @Test func aSlowAsynchronousHandlerAndAnOpenStreamAreNotCutByTheDeadlines() async throws {
        var router = deadlineRouter
        router.get("/events") { _ in
            let stream = EventStream()
            stream.send(data: "first")
            Task {
                try? await Task.sleep(for: .milliseconds(2500))
                stream.send(data: "second")
            }
            return .eventStream(stream)
        }
        try await withServer(router: router, configure: {
            $0.requestHeaderTimeoutSeconds = 1
            $0.requestBodyTimeoutSeconds = 1
        }) { server in
            let port = server.port
            // Generous client timeouts: what is checked is that nothing is cut (the deadlines are 1 s), not how soon
            // the answers come; with the whole suite running on two cores, a Task's wake-up can lag by seconds.
            async let slow = blocking { () throws -> RawResponse in
                try RawHTTP.request(port: port, "GET", "/slow", timeout: .seconds(30))
            }
            let events = try await blocking { () throws -> [String?] in
                let client = try EventStreamClient(port: port, target: "/events")
                defer { client.connection.close() }
                return [try client.nextEvent(timeout: .seconds(30))?.data, try client.nextEvent(timeout: .seconds(30))?.data]
            }
            #expect(try await slow.text == "late")
            #expect(events == ["first", "second"])
            #expect(server.connectionsCutForDeadline == 0)
        }
    }
}

@Suite(.tags(.concurrency)) struct StreamDisconnectConcurrencyTests {
    /// With a 15 s heartbeat, no write can be what notices the client leaving within a second. (That the server's
    /// descriptor is released too is checked on the real binary, whose descriptors are its own: see
    /// Tests/system/test_stream_resources.py.)
    ///
    /// The second is measured to the instant the stream's termination handler ran, on the server's side, not to
    /// when this test's polling next woke: with the whole suite under ThreadSanitizer on two cores, a `Task.sleep`
    /// can wake late enough that the poll alone took the second (seen once in CI, at 1.01 s, in both cases at once).
    @Test(arguments: [false, true])
    func aClientLeavingAnIdleStreamEndsItWithinASecond(reset: Bool) async throws {
        let streams = Box<[EventStream]>([])
        let reasons = Box<[EventStream.Termination]>([])
        let endedAt = Box<ContinuousClock.Instant?>(nil)
        var router = HTTPRouter()
        router.get("/events") { _ in
            let stream = EventStream()
            stream.send(data: "welcome")
            stream.onTermination { reason in
                endedAt.update { $0 = $0 ?? ContinuousClock.now }
                reasons.update { $0.append(reason) }
            }
            streams.update { $0.append(stream) }
            return .eventStream(stream)
        }
        try await withServer(router: router, configure: { $0.heartbeatInterval = .seconds(15) }) { server in
            let port = server.port
            let client = try await blocking { () throws -> EventStreamClient in
                let client = try EventStreamClient(port: port, target: "/events")
                _ = try client.nextEvent()
                return client
            }
            #expect(await eventually { server.openStreamCount == 1 })
            // Let the stream drain its welcome and suspend: the idle case is the one the library cannot see.
            try await Task.sleep(for: .milliseconds(200))
            let closedAt = ContinuousClock.now
            if reset { client.connection.reset() } else { client.connection.close() }
            #expect(await eventually { server.openStreamCount == 0 })
            #expect(await eventually { server.activeRequestCount == 0 })
            let ended = try #require(endedAt.value)
            #expect(ended - closedAt < .seconds(1))
            #expect(reasons.value == [.clientDisconnected])
            #expect(streams.value.first.map { !$0.send(data: "after the end") } == true)
        }
    }
}

/// The default header limit (8 KiB; the connection pool, what every open connection holds, is 4 KiB more) and
/// the header sections it takes.
@Suite struct DefaultPoolTests {
    private static func status(port: Int, cookieBytes: Int) throws -> Int {
        let bytes = RawConnection.requestBytes("GET", "/ping", headers: [("Cookie", "c=" + String(repeating: "v", count: cookieBytes))])
        return try RawHTTP.exchange(port: port, bytes: bytes).status
    }

    @Test func aBrowserSizedHeaderSectionFitsAndALargerOneIsA431() async throws {
        #expect(HTTPServerConfiguration().maxHeaderBytes == 8 * 1024)
        try await withServer(router: deadlineRouter) { server in
            let port = server.port
            let statuses = try await blocking { () throws -> [Int] in
                [
                    try Self.status(port: port, cookieBytes: 2000), try Self.status(port: port, cookieBytes: 7000),
                    try Self.status(port: port, cookieBytes: 20 * 1024),
                ]
            }
            #expect(statuses == [200, 200, 431])
        }
    }
}
