import Dispatch
import Foundation
import JSONPatch
import MVVMR
import MVVMRServer
import Testing

// Many clients act on many sessions at once against the SQLite store, with event streams open: every answer
// waits for its group commit, every event goes out after it, in order. Named `…StoreRaceTests` so that CI
// runs it under ThreadSanitizer (raw sockets on threads of their own: no URLSession there), in the run of the store tests.

/// One blocking HTTP/1.1 exchange on a fresh connection (`Connection: close`): the status and the body.
private func rawExchange(port: Int, _ method: String, _ path: String, session: String?, body: String?) throws -> (Int, String) {
    let descriptor = try connectedSocket(port: port, receiveTimeoutSeconds: 20)
    defer { close(descriptor) }
    var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    if let session { request += "X-Session-ID: \(session)\r\n" }
    let payload = Array((body ?? "").utf8)
    request += "Content-Type: application/json\r\nContent-Length: \(payload.count)\r\n\r\n"
    let bytes = Array(request.utf8) + payload
    _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 8192)
    while true {
        let count = recv(descriptor, &buffer, buffer.count, 0)
        if count <= 0 { break }
        received += buffer[0..<count]
    }
    let text = String(decoding: received, as: UTF8.self)
    guard let headEnd = text.range(of: "\r\n\r\n") else { throw TimedOut(what: "an answer") }
    let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
    return (status, String(text[headEnd.upperBound...]))
}

@Suite(.serialized) struct DurableSessionStoreRaceTests {
    @Test func concurrentActionsOnManySessionsAreAllStoredAnsweredAndReplayed() async throws {
        let file = ScratchStoreFile()
        var server = try TestServer(store: try file.open(), units: [.counter], root: .counter)
        let port = server.port
        let sessionCount = 8
        let actionsPerSession = 40
        var sessions: [String] = []
        for _ in 0..<sessionCount {
            let (status, body) = try rawExchange(port: port, "POST", "/api/sessions", session: nil, body: "{}")
            #expect(status == 201)
            sessions.append(try #require(try JSONValue(parsing: Array(body.utf8))["session"]?.stringValue))
        }
        let streams = try await withThrowingTaskGroup(of: [StreamedEvent].self) { group in
            // A stream per session, read to its last patch while the actions run.
            for session in sessions.prefix(2) {
                group.addTask { try await blockingEvents(port: port, session: session, lastEventID: 1, count: actionsPerSession) }
            }
            try await withThrowingTaskGroup(of: Int.self) { actions in
                for (index, session) in sessions.enumerated() {
                    for worker in 0..<2 {
                        actions.addTask {
                            try await withCheckedThrowingContinuation { continuation in
                                DispatchQueue.global().async {
                                    continuation.resume(with: Result {
                                        var failures = 0
                                        for _ in 0..<(actionsPerSession / 2) {
                                            let (status, _) = try rawExchange(
                                                port: port, "POST", "/api/pages/counter/actions", session: session,
                                                body: #"{"action":"add","value":\#(index + worker + 1)}"#)
                                            if status != 200 { failures += 1 }
                                        }
                                        return failures
                                    })
                                }
                            }
                        }
                    }
                }
                var failures = 0
                for try await count in actions { failures += count }
                #expect(failures == 0)
            }
            var all: [[StreamedEvent]] = []
            for try await events in group { all.append(events) }
            return all
        }
        for events in streams {
            #expect(events.count == actionsPerSession)
            #expect(events.map(\.id) == events.map(\.id).sorted())
        }
        var expected: [JSONValue] = []
        for (index, session) in sessions.enumerated() {
            let (_, body) = try rawExchange(port: port, "GET", "/api/pages/counter", session: session, body: nil)
            let page = try JSONValue(parsing: Array(body.utf8))
            let count = (actionsPerSession / 2) * (index + 1) + (actionsPerSession / 2) * (index + 2)
            #expect(page["view"]?["count"]?.intValue == count)
            #expect(page["rev"]?.intValue == actionsPerSession)
            expected.append(page["view"] ?? .null)
        }
        server.stop()
        server = try TestServer(port: port, store: try file.open(), units: [.counter], root: .counter)
        defer { server.stop() }
        for (index, session) in sessions.enumerated() {
            let (_, body) = try rawExchange(port: port, "GET", "/api/pages/counter", session: session, body: nil)
            #expect(try JSONValue(parsing: Array(body.utf8))["view"] == expected[index])
        }
    }
}
