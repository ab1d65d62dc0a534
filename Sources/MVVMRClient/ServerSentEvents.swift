import Foundation

/// One event of a `text/event-stream`.
struct ServerSentEvent: Sendable, Equatable {
    /// The last event id in force when the event was dispatched (the stream's `id:` fields persist).
    var id: String?
    /// The `event:` field; `message` when absent.
    var name: String
    /// The `data:` lines, joined by newlines.
    var data: String
}

/// An incremental parser of the `text/event-stream` format (the HTML Living Standard's algorithm): feed
/// it bytes as they arrive, in chunks cut anywhere, and it returns the events and `retry:` values
/// completed by each chunk. Lines end with CRLF, LF or CR; `:` lines are comments.
struct ServerSentEventParser {
    enum Output: Sendable, Equatable {
        case event(ServerSentEvent)
        case retry(Int)
    }

    private var line: [UInt8] = []
    private var afterCarriageReturn = false
    private var startOfStream = true
    private var data = ""
    private var hasData = false
    private var eventName = ""
    private(set) var lastEventID: String?

    init() {}

    /// Parses the next chunk of the stream.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> [Output] {
        var outputs: [Output] = []
        for byte in bytes {
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == 0x0A { continue }  // the LF of a CRLF
            }
            switch byte {
            case 0x0A:
                processLine(into: &outputs)
            case 0x0D:
                afterCarriageReturn = true
                processLine(into: &outputs)
            default:
                line.append(byte)
            }
        }
        return outputs
    }

    private mutating func processLine(into outputs: inout [Output]) {
        var bytes = line
        line.removeAll(keepingCapacity: true)
        if startOfStream {
            startOfStream = false
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }  // a BOM
        }
        if bytes.isEmpty {
            dispatch(into: &outputs)
            return
        }
        if bytes[0] == 0x3A { return }  // ": comment"
        let field: String
        var value: String
        if let colon = bytes.firstIndex(of: 0x3A) {
            field = String(decoding: bytes[..<colon], as: UTF8.self)
            var start = colon + 1
            if start < bytes.count, bytes[start] == 0x20 { start += 1 }
            value = String(decoding: bytes[start...], as: UTF8.self)
        } else {
            field = String(decoding: bytes, as: UTF8.self)
            value = ""
        }
        switch field {
        case "event":
            eventName = value
        case "data":
            if hasData { data += "\n" }
            data += value
            hasData = true
        case "id":
            if !value.contains("\0") { lastEventID = value }
        case "retry":
            if !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let milliseconds = Int(value) {
                outputs.append(.retry(milliseconds))
            }
        default:
            value = ""
        }
    }

    private mutating func dispatch(into outputs: inout [Output]) {
        defer {
            data = ""
            hasData = false
            eventName = ""
        }
        guard hasData else { return }
        outputs.append(.event(ServerSentEvent(id: lastEventID, name: eventName.isEmpty ? "message" : eventName, data: data)))
    }
}
