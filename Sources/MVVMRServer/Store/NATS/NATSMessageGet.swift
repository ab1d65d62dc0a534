import JSONPatch

/// JetStream's message get (`$JS.API.STREAM.MSG.GET.<stream>`), asked by position: the first message on a subject at
/// or after a stream sequence (`next_by_subj`, nats-server 2.9 and later). nats.c 3.4 asks it only by sequence or for
/// a subject's last message, so the store builds the request and reads the answer here.
///
/// Why not an ordered consumer: reading a session's log with one makes an ephemeral consumer per restore, and on
/// nats-server 2.9 after the stream's leader is lost, a share of new consumers never deliver (measured: a third of
/// the reads, for as long as the run lasted). A message get is answered by the stream's leader like any other
/// JetStream request, so it comes back as soon as a new leader is elected, and it includes every acknowledged write.
enum NATSMessageGet {
    /// The request's body: the first message on `subject` at or after `sequence`.
    static func request(subject: String, from sequence: UInt64) -> [UInt8] {
        let body: JSONValue = .object(["seq": .int(Int(clamping: sequence)), "next_by_subj": .string(subject)])
        return body.jsonBytes
    }

    /// What an answer says: the message, or nil when there is none at or after the position ("no message found").
    /// - Throws: `unavailable` for any other error JetStream answered, or an answer that does not parse.
    static func message(fromAnswer bytes: [UInt8], asked subject: String) throws(SessionStoreError) -> NATSStreamMessage? {
        let answer: Answer
        do {
            answer = try JSONValueDecoder().decode(Answer.self, from: try JSONValue(parsing: bytes))
        } catch {
            throw SessionStoreError(.unavailable, "cannot read \(subject): JetStream's answer does not parse")
        }
        if let error = answer.error {
            // Only "no message found": a missing stream is also a 404, and is no empty log.
            if error.errorCode == noMessageFound || (error.errorCode == nil && error.code == 404) { return nil }
            let words = error.description ?? "error \(error.code)"
            throw SessionStoreError(.unavailable, "cannot read \(subject): \(words) (JetStream error \(error.errorCode ?? 0))")
        }
        guard let stored = answer.message, stored.sequence > 0,
            let body = Base64.decode(stored.data ?? ""), let headerBlock = Base64.decode(stored.headers ?? "")
        else {
            throw SessionStoreError(.unavailable, "cannot read \(subject): JetStream's answer has no message")
        }
        return NATSStreamMessage(
            sequence: stored.sequence, subject: stored.subject, headers: headers(in: headerBlock), body: body)
    }

    /// JetStream's error code for "no message found".
    static let noMessageFound = 10037

    /// The headers of a NATS header block (`NATS/1.0\r\nKey: Value\r\n…\r\n\r\n`): the first value of each key.
    static func headers(in block: [UInt8]) -> [String: String] {
        var headers: [String: String] = [:]
        let lines = block.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        for line in lines.dropFirst() {  // the first line is the version (and a status, never on a stored message)
            let trimmed = line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...]
            guard let colon = trimmed.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let key = String(decoding: trimmed[..<colon], as: UTF8.self)
            let value = String(decoding: trimmed[trimmed.index(after: colon)...].drop { $0 == UInt8(ascii: " ") }, as: UTF8.self)
            if headers[key] == nil { headers[key] = value }
        }
        return headers
    }

    private struct Answer: Decodable {
        let message: StoredMessage?
        let error: APIError?
    }

    private struct StoredMessage: Decodable {
        let subject: String
        let sequence: UInt64
        let headers: String?
        let data: String?

        enum CodingKeys: String, CodingKey {
            case subject
            case sequence = "seq"
            case headers = "hdrs"
            case data
        }
    }

    private struct APIError: Decodable {
        let code: Int
        let errorCode: Int?
        let description: String?

        enum CodingKeys: String, CodingKey {
            case code
            case errorCode = "err_code"
            case description
        }
    }
}

/// Standard base64 (RFC 4648 §4, padded), as JetStream's API writes message bodies and headers.
enum Base64 {
    /// The bytes `text` encodes, or nil when it is not base64.
    static func decode(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count / 4 * 3)
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0, let value = sextet(byte) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // What is left is under a byte, and zero; the padding rounds the length up to four characters.
        // A length of one more than a multiple of four is never base64, padded or not.
        guard padding <= 2, (text.utf8.count % 4 == 0) || padding == 0, text.utf8.count % 4 != 1,
            accumulator & ((1 << UInt32(bits)) - 1) == 0
        else { return nil }
        return output
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
