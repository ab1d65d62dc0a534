import JSONPatch

// The request-side parsers of the page protocol's header fields, kept free of the server's other types so that unit
// tests and the libFuzzer targets in Fuzz/ drive them directly (bodies are MVVMRProtocol's messages).

/// Why a request's field could not be read; the routes answer it as `400 invalid_request` with this message.
struct RequestFieldError: Error, Hashable {
    /// The message for people, naming the field and what it must be.
    let message: String
}

/// Pure parsers of the request fields the protocol reads from header fields and the query.
enum RequestParsing {
    /// Reads a `Last-Event-ID` (header field or `lastEventId` query parameter): ASCII decimal digits, with
    /// spaces or tabs around them. A number larger than `Int.max` is ahead of every session's sequence, so it
    /// reads as `Int.max`, which the session answers with snapshots like any other id ahead of it.
    /// - Parameter text: the field's value.
    /// - Returns: the event id, or `nil` when the text is empty (no id given).
    /// - Throws: ``RequestFieldError`` when the text is anything but digits (a sign, a fraction, letters).
    static func lastEventID(_ text: String) throws(RequestFieldError) -> Int? {
        var digits = Substring(text).utf8[...]
        while let first = digits.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { digits.removeFirst() }
        while let last = digits.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { digits.removeLast() }
        if digits.isEmpty {
            // An empty value is no id at all; spaces alone are text that is not a number.
            if text.isEmpty { return nil }
            throw RequestFieldError(message: "Last-Event-ID must be a non-negative whole number.")
        }
        var value = 0
        var beyondInt = false
        for byte in digits {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else {
                throw RequestFieldError(message: "Last-Event-ID must be a non-negative whole number.")
            }
            if beyondInt { continue }
            let (times10, overflowMultiplying) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowAdding) = times10.addingReportingOverflow(Int(byte &- UInt8(ascii: "0")))
            if overflowMultiplying || overflowAdding { beyondInt = true } else { value = next }
        }
        return beyondInt ? Int.max : value
    }
}
