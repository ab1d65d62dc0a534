import Foundation
import MicroHTTP
import Testing

// A library thread keeps its last answers to GET and HEAD and sends an equal answer again without making it anew
// (ResponseCache): what it sends must always be exactly the answer the handler gave, whatever it kept.

@Suite struct ResponseCacheTests {
    /// What the handler of `/answer` answers next: set by the test between requests.
    struct Answer: Sendable {
        var status = 200
        var headers: [(String, String)] = [("X-Version", "1")]
        var body = "same"
    }

    private static func answerRouter(_ next: Box<Answer>) -> HTTPRouter {
        var router = HTTPRouter()
        router.get("/answer") { _ in
            let answer = next.value
            var headers = HTTPHeaders()
            for (name, value) in answer.headers { headers.add(name: name, value: value) }
            return HTTPResponse(status: answer.status, headers: headers, body: .bytes(Array(answer.body.utf8)))
        }
        router.post("/answer") { _ in .text(next.value.body) }
        return router
    }

    /// One keep-alive connection, so one library thread and its one cache: each answer differs from a kept one in a
    /// single part (a header's value, the status, the body's bytes at the same length, a header more), and must come
    /// out as the handler gave it.
    @Test func anAnswerDifferingInAnyPartFromAKeptOneIsSentAsGiven() async throws {
        let next = Box(Answer())
        try await withServer(router: Self.answerRouter(next)) { server in
            let port = server.port
            let steps: [Answer] = [
                Answer(),
                Answer(headers: [("X-Version", "2")]),
                Answer(status: 201, headers: [("X-Version", "2")]),
                Answer(status: 201, headers: [("X-Version", "2")], body: "sane"),
                Answer(headers: [("X-Version", "1"), ("X-Extra", "yes")]),
                Answer(headers: [("x-version", "1")]),
                Answer(headers: [], body: ""),
                Answer(),
            ]
            let responses = try await blocking { () throws -> [RawResponse] in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                var responses: [RawResponse] = []
                for step in steps {
                    next.value = step
                    // Twice each: the second is the one a kept answer would be sent for.
                    responses.append(try connection.request("GET", "/answer"))
                    responses.append(try connection.request("GET", "/answer"))
                }
                return responses
            }
            for (index, response) in responses.enumerated() {
                let step = steps[index / 2]
                #expect(response.status == step.status, "request \(index)")
                #expect(response.text == step.body, "request \(index)")
                #expect(response.header("X-Version") == step.headers.first(where: { $0.0.lowercased() == "x-version" })?.1)
                #expect(response.header("X-Extra") == step.headers.first(where: { $0.0 == "X-Extra" })?.1)
                #expect(response.header("Content-Length") == String(step.body.utf8.count))
            }
        }
    }

    /// More distinct answers than a thread keeps, then the first ones again (long since replaced), a HEAD of a kept
    /// answer (headers, no body: the next response on the connection must start right after them), and a POST
    /// answering the same bytes.
    @Test func answersOutlastingTheirSlotsAndAHeadOfAKeptAnswerComeOutWhole() async throws {
        let next = Box(Answer())
        try await withServer(router: Self.answerRouter(next)) { server in
            let port = server.port
            let bodies = (0..<20).map { "answer number \($0)" }
            let (texts, head, afterHead, post) = try await blocking {
                () throws -> ([String], RawResponse, RawResponse, RawResponse) in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                var texts: [String] = []
                for body in bodies + bodies.reversed() + bodies {
                    next.value = Answer(body: body)
                    texts.append(try connection.request("GET", "/answer").text)
                }
                next.value = Answer(body: "kept")
                _ = try connection.request("GET", "/answer")
                let head = try connection.request("HEAD", "/answer")
                let afterHead = try connection.request("GET", "/answer")
                let post = try connection.request("POST", "/answer", body: Array("x".utf8))
                return (texts, head, afterHead, post)
            }
            #expect(texts == bodies + bodies.reversed() + bodies)
            #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == "4")
            #expect(head.header("X-Version") == "1")
            #expect(afterHead.text == "kept")
            #expect(post.text == "kept" && post.header("X-Version") == nil)
        }
    }

    /// A stopping server says `Connection: close` on every answer, a kept one's equal included.
    @Test func aDrainingServerClosesAfterAnAnswerItKeptBefore() async throws {
        let next = Box(Answer())
        let gate = Gate()
        var router = Self.answerRouter(next)
        router.add("GET", "/slow", .asynchronous { _ in
            await gate.wait()
            return .text("slow")
        })
        // One library thread: both connections meet the same cache. (A second stop, withServer's own, does nothing.)
        try await withServer(router: router, configure: { $0.threadCount = 1 }) { server in
            let port = server.port
            let connection = try RawConnection(port: port)
            defer { connection.close() }
            let before = try await blocking { try connection.request("GET", "/answer") }
            #expect(before.header("Connection")?.lowercased() != "close")
            // A request in flight keeps the server draining (not stopped) while the kept answer is asked for again.
            let slow = try RawConnection(port: port)
            defer { slow.close() }
            try slow.send(RawConnection.requestBytes("GET", "/slow", keepAlive: true))
            #expect(await eventually { gate.arrivals == 1 })
            let stopping = Task.detached { server.stop(gracePeriod: .seconds(10)) }
            #expect(await eventually { server.isDraining })
            let during = try await blocking { try connection.request("GET", "/answer") }
            gate.open()
            await stopping.value
            #expect(during.status == 200 && during.text == "same")
            #expect(during.header("Connection")?.lowercased() == "close")
        }
    }
}
