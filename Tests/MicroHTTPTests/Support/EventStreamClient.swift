/// One Server-Sent Events block as received: its raw text and what it means.
struct ReceivedBlock: Sendable, Equatable {
    /// The block's text without the blank line that ends it.
    var raw: String
    var id: String?
    var event: String?
    /// `data:` lines joined with `\n`, or `nil` when the block has none (a comment).
    var data: String?
    /// Comment lines (`: text`), without the colon and space.
    var comments: [String]

    init(raw: String) {
        self.raw = raw
        var dataLines: [String] = []
        var comments: [String] = []
        for line in raw.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") {
                comments.append(String(line.dropFirst().drop { $0 == " " }))
                continue
            }
            let name: Substring
            var value: Substring = ""
            if let colon = line.firstIndex(of: ":") {
                name = line[..<colon]
                value = line[line.index(after: colon)...]
                if value.hasPrefix(" ") { value = value.dropFirst() }
            } else {
                name = line
            }
            switch name {
            case "id": id = String(value)
            case "event": event = String(value)
            case "data": dataLines.append(String(value))
            default: break
            }
        }
        self.data = dataLines.isEmpty ? nil : dataLines.joined(separator: "\n")
        self.comments = comments
    }
}

/// Reads an event-stream response over a raw connection, block by block.
final class EventStreamClient: @unchecked Sendable {
    // @unchecked Sendable: used by one thread at a time, like its connection.
    let connection: RawConnection
    let head: ResponseHead
    private var pending: [UInt8] = []
    /// The server ended the body: the terminating chunk of a chunked one, or the close of one delimited by it.
    private(set) var ended = false
    /// Whether the body is chunked (the library served the stream) or runs until the close (MicroHTTP did).
    let isChunked: Bool

    /// Connects, sends `GET target` and reads the response head.
    init(port: Int, target: String, timeout: Duration = .seconds(10)) throws {
        connection = try RawConnection(port: port)
        try connection.send(RawConnection.requestBytes("GET", target, headers: [("Accept", "text/event-stream")], keepAlive: true))
        head = try connection.readHead(timeout: timeout)
        isChunked = head.header("Transfer-Encoding")?.lowercased() == "chunked"
    }

    /// The next block (event or comment), or `nil` when the server ended the stream.
    func nextBlock(timeout: Duration = .seconds(10)) throws -> ReceivedBlock? {
        let deadline = Deadline(timeout)
        while true {
            if let end = Self.blankLine(in: pending) {
                let raw = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeFirst(end + 2)
                return ReceivedBlock(raw: raw)
            }
            if ended { return nil }
            guard !deadline.hasPassed else { throw ClientError.timedOut("event") }
            let remaining = Duration.milliseconds(Int64(max(1, deadline.remainingMilliseconds)))
            if let chunk = try isChunked ? connection.readChunk(timeout: remaining) : connection.readUntilClose(timeout: remaining) {
                pending.append(contentsOf: chunk)
            } else {
                ended = true
            }
        }
    }

    /// The next block that carries data, skipping comments (heartbeats).
    func nextEvent(timeout: Duration = .seconds(10)) throws -> ReceivedBlock? {
        let deadline = Deadline(timeout)
        while let block = try nextBlock(timeout: .milliseconds(Int64(max(1, deadline.remainingMilliseconds)))) {
            if block.data != nil { return block }
        }
        return nil
    }

    /// Reads until the stream ends; returns the blocks read meanwhile.
    func readToEnd(timeout: Duration = .seconds(10)) throws -> [ReceivedBlock] {
        let deadline = Deadline(timeout)
        var blocks: [ReceivedBlock] = []
        while let block = try nextBlock(timeout: .milliseconds(Int64(max(1, deadline.remainingMilliseconds)))) {
            blocks.append(block)
        }
        return blocks
    }

    private static func blankLine(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        for index in 0..<(bytes.count - 1) where bytes[index] == 10 && bytes[index + 1] == 10 {
            return index
        }
        return nil
    }
}

/// `count` event streams of `/events` opened one after another, each past its first event (blocking: call it
/// inside `blocking { }`).
func openedEventStreams(count: Int, port: Int) throws -> [EventStreamClient] {
    try (0..<count).map { _ in
        let client = try EventStreamClient(port: port, target: "/events")
        _ = try client.nextEvent()
        return client
    }
}
