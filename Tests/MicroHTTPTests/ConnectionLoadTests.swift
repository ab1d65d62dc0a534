import Foundation
import Testing

@testable import MicroHTTP

/// What one connection can ask of the engine at once: thousands of pipelined requests, a body in thousands of
/// chunks, a refused body it keeps sending, a large answer it reads slowly while the server stops. CI runs the suite
/// on both engines (`MICROHTTP_ENGINE`).
@Suite struct ConnectionLoadTests {
    /// The loops share one epoll set: whichever is running serves whichever connection is ready. With a set per loop,
    /// the connections of a loop that was busy (or taken off its core by the scheduler) waited for it, though another
    /// loop was free: here, a handler that holds one loop for 1.5 s held up the connections of that loop as long.
    @Test(.enabled(if: testEngine == .epoll))
    func aLoopHeldByASlowHandlerHoldsUpNoOtherConnection() async throws {
        var router = HTTPRouter()
        router.get("/ok") { _ in .text("ok") }
        router.get("/slow") { _ in
            usleep(1_500_000)
            return .text("slow")
        }
        try await withServer(router: router, configure: { $0.threadCount = 2 }) { server in
            let port = server.port
            let (slowest, answered, slow) = try await blocking { () throws -> (Double, Int, Int) in
                let connections = try (0..<20).map { _ in try RawConnection(port: port) }
                defer { for connection in connections { connection.close() } }
                // Each connection served once, so that each is known to the engine before the slow request.
                for connection in connections {
                    try connection.send(Array("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                    _ = try connection.readResponse()
                }
                try connections[0].send(Array("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                Thread.sleep(forTimeInterval: 0.2)
                var slowest = 0.0
                var answered = 0
                for connection in connections.dropFirst() {
                    let start = Date()
                    try connection.send(Array("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                    if try connection.readResponse().status == 200 { answered += 1 }
                    slowest = max(slowest, Date().timeIntervalSince(start))
                }
                let slow = try connections[0].readResponse(timeout: .seconds(5)).status
                return (slowest, answered, slow)
            }
            #expect(answered == 19)
            #expect(slow == 200)
            #expect(slowest < 0.5, "the slowest of 19 answers took \(slowest) s while one loop was held")
        }
    }

    @Test func twoThousandPipelinedRequestsAreAnsweredWholeAndInOrder() async throws {
        var router = HTTPRouter()
        router.get("/n/{index}") { request in
            .text((request.pathParameters["index"] ?? "?") + ":" + String(repeating: ".", count: 1000))
        }
        try await withServer(router: router) { server in
            let port = server.port
            let indices = try await blocking { () throws -> [String] in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                // About 70 KB of requests in one go, whose answers (2 MB) are far more than the engine queues for
                // one connection before it stops reading (256 KiB): it must read on as the client takes them.
                let count = 2000
                var requests: [UInt8] = []
                for index in 0..<count { requests += Array("GET /n/\(index) HTTP/1.1\r\nHost: x\r\n\r\n".utf8) }
                try connection.send(requests)
                var indices: [String] = []
                for _ in 0..<count {
                    let response = try connection.readResponse()
                    guard response.status == 200, response.body.count > 1000 else { break }
                    indices.append(String(response.text.prefix { $0 != ":" }))
                }
                return indices
            }
            #expect(indices == (0..<2000).map(String.init))
        }
    }

    @Test func aBodyInFourThousandChunksIsReadWhole() async throws {
        var router = HTTPRouter()
        router.post("/length") { request in .text("\(request.body.count) \(request.body.allSatisfy { $0 == 0x61 })") }
        try await withServer(router: router) { server in
            let port = server.port
            let response = try await blocking { () throws -> RawResponse in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                var bytes = Array("POST /length HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                for _ in 0..<4000 { bytes += Array("10;part\r\n\(String(repeating: "a", count: 16))\r\n".utf8) }
                bytes += Array("0\r\n\r\n".utf8)
                try connection.send(bytes)
                return try connection.readResponse()
            }
            #expect(response.status == 200)
            #expect(response.text == "64000 true")
        }
    }

    @Test func aHeadOfHundredsOfKibibytesArrivingInPiecesIsRead() async throws {
        var router = HTTPRouter()
        router.get("/ok") { request in .text("\(request.headers["X-Big"]?.count ?? 0)") }
        try await withServer(router: router, configure: { $0.maxHeaderBytes = 600 * 1024 }) { server in
            let port = server.port
            let response = try await blocking { () throws -> RawResponse in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                let head = Array("GET /ok HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "b", count: 400 * 1024))\r\n\r\n".utf8)
                // More than the engine holds back for a connection's pipelined requests, then the rest a moment later.
                try connection.send(Array(head[0..<(300 * 1024)]))
                Thread.sleep(forTimeInterval: 0.3)
                try connection.send(Array(head[(300 * 1024)...]))
                return try connection.readResponse()
            }
            #expect(response.status == 200)
            #expect(response.text == "\(400 * 1024)")
        }
    }

    @Test func aRefusedBodyKeptComingIsNotResetBeforeTheClientReadsTheRefusal() async throws {
        var router = HTTPRouter()
        router.post("/length") { request in .text("\(request.body.count)") }
        try await withServer(router: router, configure: { $0.maxBodyBytes = 1000 }) { server in
            let port = server.port
            let response = try await blocking { () throws -> RawResponse in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                let body = [UInt8](repeating: 0x62, count: 200_000)
                let head = Array("POST /length HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
                _ = connection.sendUntilAnswered(head + body)
                return try connection.readResponse()
            }
            #expect(response.status == 413)
            #expect(errorCode(response) == "payload_too_large")
        }
    }

    @Test func aLargeAnswerReadSlowlyArrivesWholeWhileTheServerStops() async throws {
        let size = 8 << 20
        var router = HTTPRouter()
        router.get("/big") { _ in HTTPResponse(status: 200, body: .bytes([UInt8](repeating: 0x63, count: size))) }
        try await withServer(router: router) { server in
            let port = server.port
            let connection = try RawConnection(port: port)
            defer { connection.close() }
            try connection.send(RawConnection.requestBytes("GET", "/big", keepAlive: true))
            // The answer is queued and partly sent; the rest waits for the client, which reads nothing yet.
            try await Task.sleep(for: .milliseconds(300))
            // Stopped off the cooperative pool (a blocked pool thread would starve other tests' handlers).
            let stopping = Task { await timedStop(server, gracePeriod: .seconds(10)) }
            #expect(await eventually { server.isDraining })
            let response = try await blocking { try connection.readResponse(timeout: .seconds(20)) }
            _ = await stopping.value
            #expect(response.status == 200)
            #expect(response.body.count == size)
        }
    }
}
