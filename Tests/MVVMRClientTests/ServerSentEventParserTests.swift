import Testing

@testable import MVVMRClient

@Suite struct ServerSentEventParserTests {
    @Test func parsesEventsCutAnywhere() {
        let stream = "retry: 2000\r\n\r\n: ping\n\nid: 17\nevent: patch\ndata: {\"a\":1}\n\nid: 18\r\nevent: navigate\r\ndata: x\r\ndata: y\r\n\r\ndata: z\r\r"
        let bytes = Array(stream.utf8)
        for cut in 1..<bytes.count {
            var parser = ServerSentEventParser()
            let outputs = parser.feed(bytes[..<cut]) + parser.feed(bytes[cut...])
            #expect(
                outputs == [
                    .retry(2000),
                    .event(ServerSentEvent(id: "17", name: "patch", data: "{\"a\":1}")),
                    .event(ServerSentEvent(id: "18", name: "navigate", data: "x\ny")),
                    .event(ServerSentEvent(id: "18", name: "message", data: "z")),
                ], "cut at \(cut)")
        }
    }

    @Test func ignoresEventsWithoutDataAndUnknownFields() {
        var parser = ServerSentEventParser()
        let outputs = parser.feed(Array("event: nothing\n\nfoo: bar\nretry: soon\ndata\n\n".utf8))
        #expect(outputs == [.event(ServerSentEvent(id: nil, name: "message", data: ""))])
    }

    @Test func anEventWithoutIDKeepsTheLastOne() {
        var parser = ServerSentEventParser()
        let outputs = parser.feed(Array("id: 5\ndata: a\n\nevent: expired\ndata: {}\n\n".utf8))
        #expect(outputs.last == .event(ServerSentEvent(id: "5", name: "expired", data: "{}")))
    }
}
