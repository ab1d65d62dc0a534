import JSONPatch

// The request-side parsers of the page protocol, kept free of the server's other types (they need only
// JSONPatch's `JSONValue`) so that unit tests and the libFuzzer targets in Fuzz/ drive them directly.

/// Why a request's field could not be read; the routes answer it as `400 invalid_request` with this message.
struct RequestFieldError: Error, Hashable {
    /// The message for people, naming the field and what it must be.
    let message: String
}

/// The fields of an action request's body: `{"action": name, "value": any, "rev": n}`.
struct ActionRequestFields: Hashable {
    /// The action's name.
    let action: String
    /// The action's value; `null` when the body had none.
    let value: JSONValue
    /// The revision the client holds, when it named one.
    let clientRevision: Int?
}

/// Pure parsers of the request fields the protocol reads from bodies and header fields.
enum RequestParsing {
    /// The largest magnitude a revision written as a JSON double may have: 2^53, below which every whole
    /// number is exactly a double, so `2251799813685248.0` is the revision it spells and not a neighbour.
    static let largestExactRevision: Double = 9_007_199_254_740_992

    /// Reads an action request's parsed body.
    /// - Parameter body: the body as parsed JSON.
    /// - Returns: the action, its value and the client's revision.
    /// - Throws: ``RequestFieldError`` when the body is not an object with a string `action`, or `rev` is
    ///   neither absent, `null` nor a non-negative whole number.
    static func actionFields(of body: JSONValue) throws(RequestFieldError) -> ActionRequestFields {
        guard case .object(let fields) = body else {
            throw RequestFieldError(message: "The body must be a JSON object with an 'action'.")
        }
        guard case .string(let action)? = fields["action"] else {
            throw RequestFieldError(message: "'action' (a string) is required.")
        }
        return ActionRequestFields(
            action: action, value: fields["value"] ?? .null, clientRevision: try revision(fields["rev"]))
    }

    /// Reads an action body's `rev`: absent or `null` is none; an integer, or a double that is a whole number
    /// within ±2^53 (so exactly the number it was written as), is the revision.
    /// - Parameter field: the `rev` member, if the body had one.
    /// - Returns: the revision, or `nil` for none.
    /// - Throws: ``RequestFieldError`` for a non-number, a fraction, a double beyond ±2^53, or a negative number.
    static func revision(_ field: JSONValue?) throws(RequestFieldError) -> Int? {
        let revision: Int
        switch field {
        case nil, .null?:
            return nil
        case .int(let value)?:
            revision = value
        case .double(let value)? where value >= -largestExactRevision && value <= largestExactRevision:
            // Within ±2^53 the truncation is exact, so comparing it back tells whole numbers from fractions.
            let truncated = Int(value)
            guard Double(truncated) == value else { throw RequestFieldError(message: "'rev' must be a whole number.") }
            revision = truncated
        default:
            throw RequestFieldError(message: "'rev' must be a whole number.")
        }
        guard revision >= 0 else { throw RequestFieldError(message: "'rev' must not be negative.") }
        return revision
    }

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
