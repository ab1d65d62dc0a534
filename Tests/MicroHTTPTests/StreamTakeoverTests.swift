import Foundation
import Locking
import MicroHTTP
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// Event streams MicroHTTP serves itself, once libmicrohttpd has let go of their connections (docs/HTTP.md,
// "Server-Sent Events"). Real sockets; the suite's name ends in `ConcurrencyTests`, so it runs under
// ThreadSanitizer too.

/// A route whose streams the test keeps, each opened with a `welcome` event and watched for how it ends.
private struct StreamRoute: Sendable {
    let streams = Box<[EventStream]>([])
    let reasons = Box<[EventStream.Termination]>([])

    func router(bufferLimit: Int = 1 << 20) -> HTTPRouter {
        var router = HTTPRouter()
        router.get("/events") { [streams, reasons] _ in
            let stream = EventStream(bufferLimit: bufferLimit)
            stream.send(event: "hello", id: "0", data: "welcome")
            stream.onTermination { reason in reasons.update { $0.append(reason) } }
            streams.update { $0.append(stream) }
            return .eventStream(stream)
        }
        router.get("/ping") { _ in .text("pong") }
        return router
    }
}

/// How often `needle` occurs in `text`.
private func occurrences(of needle: String, in text: String) -> Int {
    text.components(separatedBy: needle).count - 1
}

/// The descriptors this process has open.
private func openDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

/// How many TCP sockets with `port` at either end, other than listening ones, are still held by a descriptor: the
/// server's side and the test's side of every connection to it. Read from `/proc/self/net/tcp{,6}`, where a socket
/// no descriptor holds any more (closing, or in TIME_WAIT) has inode 0; only this process uses the port, so unlike
/// the whole descriptor count it ignores what other suites open meanwhile (and reads no link per descriptor, which
/// under ThreadSanitizer took long enough to slow the suites beside it).
private func connectedSocketCount(port: Int) -> Int {
    var count = 0
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        // Read to the end: a /proc file reports size 0, and a read sized from that stops after a page.
        guard let handle = FileHandle(forReadingAtPath: table), let bytes = try? handle.readToEnd() else { continue }
        try? handle.close()
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n").dropFirst() {
            // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[3] != "0A", fields[9] != "0" else { continue }  // 0A is LISTEN
            let ports = [fields[1], fields[2]].compactMap { $0.split(separator: ":").last.flatMap { Int($0, radix: 16) } }
            if ports.contains(port) { count += 1 }
        }
    }
    return count
}

/// This process's resident memory in bytes (`VmRSS`), or -1.
private func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kibibytes = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return -1 }
    return kibibytes * 1024
}

/// A stream request on a new connection, kept alive (so that only the server can end it by closing).
private func openStream(port: Int) throws -> RawConnection {
    let connection = try RawConnection(port: port)
    try connection.send(
        RawConnection.requestBytes("GET", "/events", headers: [("Accept", "text/event-stream")], keepAlive: true))
    return connection
}

@Suite(.tags(.concurrency)) struct StreamTakeoverConcurrencyTests {
    @Test func aStreamOnTheWireIsItsHeadOnceThenItsEventsAndHeartbeatsUntilTheClose() async throws {
        let route = StreamRoute()
        try await withServer(router: route.router(), configure: { $0.heartbeatInterval = .milliseconds(100) }) {
            server in
            let port = server.port
            let received = Box<[UInt8]>([])
            let reader = Task {
                try await blocking { () throws -> Void in
                    let connection = try openStream(port: port)
                    defer { connection.close() }
                    let deadline = ContinuousClock.now + .seconds(10)
                    while ContinuousClock.now < deadline,
                        let bytes = try connection.readUntilClose(timeout: deadline - ContinuousClock.now)
                    {
                        received.update { $0.append(contentsOf: bytes) }
                    }
                }
            }
            #expect(await eventually { route.streams.value.count == 1 })
            let stream = try #require(route.streams.value.first)
            // A few heartbeats while idle.
            #expect(
                await eventually {
                    occurrences(of: ": ping\n\n", in: String(decoding: received.value, as: UTF8.self)) >= 2
                })
            stream.send(event: "patch", id: "1", data: "a\nb")
            stream.close()
            try await reader.value
            let text = String(decoding: received.value, as: UTF8.self)

            let parts = text.components(separatedBy: "\r\n\r\n")
            try #require(parts.count == 2, "one head, then a body with no CRLF CRLF in it: \(text.prefix(300))")
            let lines = parts[0].components(separatedBy: "\r\n")
            #expect(lines.first == "HTTP/1.1 200 OK")
            #expect(occurrences(of: "HTTP/1.", in: text) == 1)
            let fields = lines.dropFirst().map { line -> (String, String) in
                let name = line.prefix { $0 != ":" }
                return (name.lowercased(), String(line.dropFirst(name.count + 1).drop { $0 == " " }))
            }
            #expect(
                fields.map(\.0).sorted() == [
                    "cache-control", "connection", "content-type", "date", "x-accel-buffering",
                ])
            let values = Dictionary(fields, uniquingKeysWith: { first, _ in first })
            #expect(values["content-type"] == "text/event-stream; charset=utf-8")
            #expect(values["cache-control"] == "no-cache, no-store")
            #expect(values["x-accel-buffering"] == "no")
            #expect(values["connection"] == "close")
            #expect(values["date"]?.hasSuffix(" GMT") == true)

            // The body is the events and heartbeats exactly as framed, with no chunk framing around them.
            let body = parts[1]
            #expect(occurrences(of: ": ping\n\n", in: body) >= 2)
            #expect(
                body.replacingOccurrences(of: ": ping\n\n", with: "")
                    == "id: 0\nevent: hello\ndata: welcome\n\nid: 1\nevent: patch\ndata: a\ndata: b\n\n")
            #expect(await eventually { route.reasons.value == [.closedByServer] })
            #expect(await eventually { server.openStreamCount == 0 && server.activeRequestCount == 0 })
        }
    }

    /// The library calls back for a resumed connection from another path than for a fresh request; the takeover
    /// works from both.
    @Test func aStreamFromAnAsynchronousHandlerIsTakenOverToo() async throws {
        let reasons = Box<[EventStream.Termination]>([])
        let streams = Box<[EventStream]>([])
        var router = HTTPRouter()
        router.add(
            "GET", "/events",
            .asynchronous { _ in
                try await Task.sleep(for: .milliseconds(50))
                let stream = EventStream()
                stream.send(data: "from a task")
                stream.onTermination { reason in reasons.update { $0.append(reason) } }
                streams.update { $0.append(stream) }
                return .eventStream(stream)
            })
        try await withServer(router: router) { server in
            let port = server.port
            let reader = Task {
                try await blocking { () throws -> (ResponseHead, [ReceivedBlock], Bool) in
                    let client = try EventStreamClient(port: port, target: "/events", timeout: .seconds(30))
                    defer { client.connection.close() }
                    return (client.head, try client.readToEnd(), client.ended)
                }
            }
            // The handler runs on the cooperative pool, which the suites starting all at once keep busy on a slow
            // machine (one clean-clone run: over 10 s before its task ran).
            #expect(await eventually(timeout: .seconds(30)) { streams.value.count == 1 })
            #expect(await eventually { server.openStreamCount == 1 })
            streams.value.first?.close()
            let (head, blocks, ended) = try await reader.value
            #expect(head.header("Connection") == "close")
            #expect(head.header("Transfer-Encoding") == nil)
            #expect(blocks.map(\.data) == ["from a task"])
            #expect(ended)
            #expect(await eventually { server.openStreamCount == 0 && server.activeRequestCount == 0 })
            #expect(reasons.value == [.closedByServer])
        }
    }

    @Test func aHeadRequestForAStreamGetsItsHeadAloneAndTheClose() async throws {
        let route = StreamRoute()
        try await withServer(router: route.router()) { server in
            let port = server.port
            let (head, after) = try await blocking { () throws -> (RawResponse, CloseObservation) in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                try connection.send(RawConnection.requestBytes("HEAD", "/events", keepAlive: true))
                let head = try connection.readResponse(method: "HEAD")
                return (head, connection.waitForClose())
            }
            #expect(head.status == 200)
            #expect(head.header("Content-Type") == "text/event-stream; charset=utf-8")
            #expect(head.header("Connection") == "close")
            // Nothing follows the head: not the welcome event, and not the stray chunked terminator the library
            // sends after a HEAD response to a stream.
            #expect(after.closed)
            #expect(after.bytes.isEmpty, "\(String(decoding: after.bytes, as: UTF8.self))")
            #expect(await eventually { server.openStreamCount == 0 && server.activeRequestCount == 0 })
            #expect(route.reasons.value == [.neverStarted])
        }
    }

    @Test func takenOverStreamsLeaveTheLibrarysConnectionsFreeAndAreHeldToMaxConnections() async throws {
        let route = StreamRoute()
        try await withServer(router: route.router(), configure: { $0.maxConnections = 3 }) { server in
            let port = server.port
            let clients = try await blocking { () throws -> [EventStreamClient] in
                try openedEventStreams(count: 3, port: port)
            }
            defer { for client in clients { client.connection.close() } }
            #expect(await eventually { server.openStreamCount == 3 })
            // Three streams, and the library, whose limit is three connections, still takes requests: it let
            // go of the streams' connections.
            let (ping, refused) = try await blocking { () throws -> (RawResponse, RawResponse) in
                (
                    try RawHTTP.request(port: port, "GET", "/ping", timeout: .seconds(3)),
                    try RawHTTP.request(port: port, "GET", "/events", timeout: .seconds(3))
                )
            }
            #expect(ping.text == "pong")
            #expect(refused.status == 503)
            #expect(refused.header("Content-Type") == "application/json")
            #expect(refused.text.contains(#""code":"stream_capacity_reached""#))
            #expect(refused.text.contains(#""limit":3"#))
            #expect(route.reasons.value == [.neverStarted])
            #expect(server.openStreamCount == 3)
            // A stream that ends gives its place back.
            clients[0].connection.close()
            #expect(await eventually { server.openStreamCount == 2 })
            let again = try await blocking { () throws -> ReceivedBlock? in
                let client = try EventStreamClient(port: port, target: "/events")
                defer { client.connection.close() }
                return try client.nextEvent()
            }
            #expect(again?.data == "welcome")
        }
    }

    @Test func streamsFromOneAddressAreHeldToMaxConnectionsPerIP() async throws {
        let route = StreamRoute()
        try await withServer(router: route.router(), configure: { $0.maxConnectionsPerIP = 2 }) { server in
            let port = server.port
            let clients = try await blocking { () throws -> [EventStreamClient] in
                try openedEventStreams(count: 2, port: port)
            }
            defer { for client in clients { client.connection.close() } }
            #expect(await eventually { server.openStreamCount == 2 })
            // The library counts two connections per address at most and holds none of the streams' now: a
            // request is answered, a third stream is refused by MicroHTTP with JSON.
            let (ping, refused) = try await blocking { () throws -> (RawResponse, RawResponse) in
                (
                    try RawHTTP.request(port: port, "GET", "/ping", timeout: .seconds(3)),
                    try RawHTTP.request(port: port, "GET", "/events", timeout: .seconds(3))
                )
            }
            #expect(ping.text == "pong")
            #expect(refused.status == 429)
            #expect(refused.text.contains(#""code":"too_many_streams_from_address""#))
            #expect(refused.text.contains(#""limit":2"#))
            #expect(server.openStreamCount == 2)
            clients[1].connection.reset()
            #expect(await eventually { server.openStreamCount == 1 })
            let again = try await blocking { () throws -> ReceivedBlock? in
                let client = try EventStreamClient(port: port, target: "/events")
                defer { client.connection.close() }
                return try client.nextEvent()
            }
            #expect(again?.data == "welcome")
        }
    }

    /// A send that ends the stream (here: overflow) must not run the termination handlers inside the call: the
    /// MVVMR server sends events while holding its session's lock, and its handler takes that lock to detach the
    /// stream. Run inline, the handler took the lock a second time and trapped the whole process (found by the soak).
    @Test func terminationHandlersOfAStreamEndedBySendDoNotRunInsideTheSend() async throws {
        let route = StreamRoute()
        let sessionLock = Locked(0)
        try await withServer(router: route.router(bufferLimit: 64)) { server in
            let port = server.port
            let client = try await blocking { () throws -> EventStreamClient in
                let client = try EventStreamClient(port: port, target: "/events")
                _ = try client.nextEvent()
                return client
            }
            defer { client.connection.close() }
            let stream = try #require(route.streams.value.first)
            stream.onTermination { _ in sessionLock.withLock { $0 += 1 } }
            // Held across the send, as a session holds its lock while it sends an event.
            let accepted = sessionLock.withLock { _ in stream.send(data: String(repeating: "z", count: 200)) }
            #expect(!accepted)
            #expect(await eventually { sessionLock.withLock { $0 } == 1 })
            #expect(route.reasons.value == [.bufferOverflow])
        }
    }

    @Test func aClientThatStopsReadingOverflowsAndIsClosedOnce() async throws {
        let route = StreamRoute()
        try await withServer(router: route.router(bufferLimit: 64 * 1024)) { server in
            let port = server.port
            let client = try await blocking { try EventStreamClient(port: port, target: "/events") }
            defer { client.connection.close() }
            #expect(client.head.header("Connection") == "close")
            #expect(await eventually { route.streams.value.count == 1 })
            let stream = try #require(route.streams.value.first)
            // Paced sends a reading client would keep up with; this one reads nothing until the end.
            let overflowed = await blocking { () -> Bool in
                let payload = String(repeating: "x", count: 16 * 1024)
                let deadline = ContinuousClock.now + .seconds(15)
                while ContinuousClock.now < deadline {
                    if !stream.send(data: payload) { return true }
                    usleep(500)
                }
                return false
            }
            #expect(overflowed)
            #expect(!stream.send(data: "more"))
            #expect(await eventually { server.openStreamCount == 0 && server.activeRequestCount == 0 })
            // What the kernel had taken still arrives, then the close.
            let blocks = try await blocking { () throws -> [ReceivedBlock] in
                try client.readToEnd(timeout: .seconds(10))
            }
            #expect(client.ended)
            #expect(blocks.first?.data == "welcome")
            #expect(blocks.count > 2)
            #expect(blocks.dropFirst().dropLast().allSatisfy { $0.data == String(repeating: "x", count: 16 * 1024) })
            #expect(route.reasons.value == [.bufferOverflow])
        }
    }

    /// Megabytes pending on a stream, then taken by a slow client as the socket lets them out (the buffer drops
    /// what went out as it goes): every event arrives whole and in order.
    @Test func aSlowClientReceivesEveryPendingEventWholeAndInOrder() async throws {
        let route = StreamRoute()
        try await withServer(router: route.router(bufferLimit: 64 << 20)) { server in
            let port = server.port
            let client = try await blocking { try EventStreamClient(port: port, target: "/events") }
            defer { client.connection.close() }
            #expect(await eventually { route.streams.value.count == 1 })
            let stream = try #require(route.streams.value.first)
            let count = 2000
            let payload = String(repeating: "p", count: 4000)
            for index in 1...count { stream.send(id: String(index), data: "\(index) \(payload)") }  // 8 MB
            let blocks = try await blocking { () throws -> [ReceivedBlock] in
                var blocks: [ReceivedBlock] = []
                while blocks.count < count + 1, let block = try client.nextEvent() {
                    blocks.append(block)
                    if blocks.count % 100 == 0 { usleep(2_000) }
                }
                return blocks
            }
            try #require(blocks.count == count + 1)
            #expect(blocks[0].data == "welcome")
            let wrong = (1...count).filter { blocks[$0].id != String($0) || blocks[$0].data != "\($0) \(payload)" }
            #expect(wrong.isEmpty, "\(wrong.prefix(5))")
            #expect(server.openStreamCount == 1)
        }
    }

    /// libmicrohttpd's inactivity timeout ended a stream it served whose client stopped reading; a taken-over stream
    /// must not outlive it either (its heartbeats alone would take weeks to fill the buffer).
    @Test func aClientThatTakesNothingForTheInactivityTimeoutIsCut() async throws {
        let route = StreamRoute()
        try await withServer(
            router: route.router(bufferLimit: 256 << 20), configure: { $0.connectionTimeoutSeconds = 1 }
        ) { server in
            let port = server.port
            let client = try await blocking { try EventStreamClient(port: port, target: "/events") }
            defer { client.connection.close() }
            #expect(await eventually { route.streams.value.count == 1 })
            let stream = try #require(route.streams.value.first)
            let chunk = String(repeating: "z", count: 64 * 1024)
            // The stall starts when the sockets' buffers are full, after this instant.
            let pushedAt = ContinuousClock.now
            for _ in 0..<512 { stream.send(data: chunk) }  // 32 MiB: far more than the sockets' buffers hold
            // Queueing 32 MiB takes a while itself (seconds under ThreadSanitizer); the stall has begun by its end.
            let queuedAt = ContinuousClock.now
            #expect(await eventually(timeout: .seconds(8)) { !route.reasons.value.isEmpty })
            let cutAt = ContinuousClock.now
            #expect(route.reasons.value == [.clientDisconnected])
            // One second without progress, checked every 250 ms; the bound leaves room for a loaded machine.
            #expect(cutAt - pushedAt >= .milliseconds(900))
            #expect(cutAt - queuedAt < .seconds(4), "cut \(cutAt - queuedAt) after the last chunk was queued")
            #expect(await eventually { server.openStreamCount == 0 && server.activeRequestCount == 0 })
        }
    }

    @Test func stopSendsEachStreamWhatItHadThenClosesItAndDropsAStalledOne() async throws {
        let route = StreamRoute()
        try await withServer(router: route.router(bufferLimit: 64 << 20)) { server in
            let port = server.port
            let clients = try await blocking { () throws -> [EventStreamClient] in
                try openedEventStreams(count: 4, port: port)
            }
            defer { for client in clients { client.connection.close() } }
            #expect(clients.allSatisfy { $0.head.header("Connection") == "close" })
            #expect(await eventually { route.streams.value.count == 4 && server.openStreamCount == 4 })
            let streams = route.streams.value
            // The last client reads nothing: more than the kernel's buffers hold stays pending on its stream.
            let stalled = try #require(streams.last)
            let chunk = String(repeating: "y", count: 64 * 1024)
            for _ in 0..<256 { stalled.send(data: chunk) }
            for stream in streams.dropLast() { stream.send(event: "bye", data: "last words") }
            let readers = clients.dropLast().map { client in
                Task {
                    try await blocking { () throws -> ([String?], Bool) in
                        (try client.readToEnd().map(\.data), client.ended)
                    }
                }
            }
            let took = await timedStop(server, gracePeriod: .milliseconds(500))
            for reader in readers {
                let (data, ended) = try await reader.value
                #expect(data == ["last words"])
                #expect(ended)
            }
            // The stalled stream holds the stop for the grace period and the forced wait (2 s), no longer.
            #expect(took < .seconds(5))
            #expect(route.reasons.value == Array(repeating: .serverStopping, count: 4))
            #expect(server.openStreamCount == 0)
            #expect(server.activeRequestCount == 0)
            #expect(!stalled.send(data: "after the stop"))
        }
    }

    /// With a 64 KiB header limit each connection the library holds has a 68 KiB pool, all of it resident; a stream
    /// no longer keeps one.
    @Test func anIdleStreamHoldsUnder8KiBEvenWithA64KiBHeaderLimit() async throws {
        let route = StreamRoute()
        try await withServer(
            router: route.router(), exclusive: true,
            configure: {
                $0.maxHeaderBytes = 64 * 1024
                $0.maxConnectionsPerIP = 0
            }
        ) { server in
            let port = server.port
            let count = 300
            let open = { @Sendable () throws -> [EventStreamClient] in
                try openedEventStreams(count: count, port: port)
            }
            // Warm up (allocator arenas, the tables' capacity), and let those streams go again.
            for client in try await blocking(open) { client.connection.close() }
            #expect(await eventually { server.openStreamCount == 0 })
            route.streams.value = []
            // The process's RSS also grows with what other suites allocate meanwhile (only ever up): the least of up to
            // three measures counts. A stream that kept its pool (68 KiB) would be over the bound in every one.
            var perStream = Int.max
            for _ in 0..<3 where perStream >= 8 * 1024 {
                try await Task.sleep(for: .milliseconds(300))
                let before = residentBytes()
                #expect(before > 0)
                let clients = try await blocking(open)
                #expect(await eventually { server.openStreamCount == count })
                try await Task.sleep(for: .milliseconds(300))  // every connection the library had is cleaned up
                perStream = min(perStream, (residentBytes() - before) / count)
                for client in clients { client.connection.close() }
                #expect(await eventually { server.openStreamCount == 0 })
                route.streams.value = []
            }
            #expect(perStream < 8 * 1024, "\(perStream) bytes of RSS per idle stream")
        }
    }

    @Test func descriptorsAreBackToTheirCountAfter200StreamsOpenAndClose() async throws {
        let route = StreamRoute()
        try await withServer(
            router: route.router(), exclusive: true, configure: { $0.maxConnectionsPerIP = 0 }
        ) { server in
            let port = server.port
            _ = try await blocking { try RawHTTP.request(port: port, "GET", "/ping") }
            try await Task.sleep(for: .milliseconds(100))  // that connection is closed on both sides by now
            let before = openDescriptorCount()
            let clients = try await blocking { () throws -> [EventStreamClient] in
                try openedEventStreams(count: 200, port: port)
            }
            #expect(await eventually { server.openStreamCount == 200 })
            // Each stream holds its client's socket and the server's one (the library's own is closed).
            // Counted by their port (the whole process's count moves with what other suites open and close).
            #expect(await eventually { connectedSocketCount(port: port) == 400 }, "\(connectedSocketCount(port: port))")
            // Every way a stream ends, at once, with requests arriving meanwhile: a descriptor closed twice would
            // hit another connection (the library reuses a freed number at its next accept).
            let streams = route.streams.value
            let pings = Task {
                try await blocking { () throws -> [String] in
                    try (0..<50).map { _ in try RawHTTP.request(port: port, "GET", "/ping").text }
                }
            }
            for (index, client) in clients.enumerated() {
                switch index % 4 {
                case 0: client.connection.close()
                case 1: client.connection.reset()
                case 2: streams[index].close()
                default:
                    streams[index].send(data: "bye")
                    streams[index].close()
                }
            }
            #expect(try await pings.value == Array(repeating: "pong", count: 50))
            let ends = try await blocking { () throws -> Int in
                try clients.enumerated().filter { $0.offset % 4 >= 2 }.map { try $0.element.readToEnd() }.count
            }
            #expect(ends == 100)
            for client in clients { client.connection.close() }
            #expect(await eventually { server.openStreamCount == 0 && server.activeRequestCount == 0 })
            // No socket of these connections is left on either side: the exact check, by port. The whole process's
            // count also catches a leaked descriptor that is not a socket; it moves with what the suites running
            // beside this one open (up to 44 more was seen), and one way of ending that leaked would leave 50 more.
            #expect(await eventually { connectedSocketCount(port: port) == 0 }, "\(connectedSocketCount(port: port)) left")
            #expect(
                await eventually { openDescriptorCount() < before + 50 }, "\(openDescriptorCount()) open, \(before) before")
            #expect(route.reasons.value.count == 200)
        }
    }
}
