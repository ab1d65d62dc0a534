/// Reads a `Transfer-Encoding: chunked` body (RFC 9112, 7.1) as it arrives, in pieces of any size: chunk sizes in
/// hexadecimal (extensions ignored), each chunk's data and its CR LF, the last chunk, and a trailer section, which
/// is read and dropped. The data is appended to a body that may not grow past a limit.
struct ChunkedBodyDecoder {
    /// What reading some bytes gave.
    enum Progress: Equatable {
        /// More bytes are needed; all those given were used.
        case needsMore
        /// The body is complete; this many of the bytes given were used (the rest is the next request).
        case complete(used: Int)
        /// The body is over the limit.
        case tooLarge
        /// The bytes are not a chunked body.
        case malformed
    }

    private enum State {
        case size, sizeExtension, sizeLineFeed, data, dataCarriageReturn, dataLineFeed
        case trailerLineStart, trailerLine, trailerLineFeed, finalLineFeed
    }

    private var state = State.size
    private var chunkRemaining = 0
    private var sizeDigits = 0
    private var trailerBytes = 0
    /// The body read so far.
    private(set) var body: [UInt8] = []
    /// The most body bytes accepted.
    let limit: Int
    /// The longest size line (extensions included), and the most bytes of trailer fields: a client cannot send
    /// framing without data forever.
    static var sizeLineLimit: Int { 1024 }
    static var trailerLimit: Int { 16 * 1024 }
    private var sizeLineBytes = 0

    /// A decoder for a body of at most `limit` bytes.
    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Reads `bytes`, the next ones of the body.
    mutating func read(_ bytes: UnsafeRawBufferPointer) -> Progress {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch state {
            case .size:
                if let digit = Self.hexValue(byte) {
                    sizeDigits += 1
                    // More than 15 hex digits cannot be a size this server accepts, and would overflow.
                    guard sizeDigits <= 15 else { return .malformed }
                    chunkRemaining = chunkRemaining * 16 + digit
                    if chunkRemaining > limit - body.count { return .tooLarge }
                } else if sizeDigits > 0 && (byte == UInt8(ascii: ";") || byte == 0x20 || byte == 0x09) {
                    state = .sizeExtension
                } else if sizeDigits > 0 && byte == 0x0D {
                    state = .sizeLineFeed
                } else {
                    return .malformed
                }
                sizeLineBytes += 1
                if sizeLineBytes > Self.sizeLineLimit { return .malformed }
            case .sizeExtension:
                if byte == 0x0D { state = .sizeLineFeed } else if byte < 0x20 && byte != 0x09 { return .malformed }
                sizeLineBytes += 1
                if sizeLineBytes > Self.sizeLineLimit { return .malformed }
            case .sizeLineFeed:
                guard byte == 0x0A else { return .malformed }
                sizeDigits = 0
                sizeLineBytes = 0
                state = chunkRemaining == 0 ? .trailerLineStart : .data
            case .data:
                let taken = min(chunkRemaining, bytes.count - index)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<index + taken]))
                chunkRemaining -= taken
                index += taken
                if chunkRemaining == 0 { state = .dataCarriageReturn }
                continue
            case .dataCarriageReturn:
                guard byte == 0x0D else { return .malformed }
                state = .dataLineFeed
            case .dataLineFeed:
                guard byte == 0x0A else { return .malformed }
                state = .size
            case .trailerLineStart:
                if byte == 0x0D {
                    state = .finalLineFeed
                } else {
                    state = .trailerLine
                }
                trailerBytes += 1
                if trailerBytes > Self.trailerLimit { return .malformed }
            case .trailerLine:
                if byte == 0x0D { state = .trailerLineFeed }
                trailerBytes += 1
                if trailerBytes > Self.trailerLimit { return .malformed }
            case .trailerLineFeed:
                guard byte == 0x0A else { return .malformed }
                state = .trailerLineStart
            case .finalLineFeed:
                guard byte == 0x0A else { return .malformed }
                return .complete(used: index + 1)
            }
            index += 1
        }
        return .needsMore
    }

    /// Takes the body out (the decoder is spent).
    mutating func takeBody() -> [UInt8] {
        defer { body = [] }
        return body
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case 0x30...0x39: Int(byte - 0x30)
        case 0x41...0x46: Int(byte - 0x41 + 10)
        case 0x61...0x66: Int(byte - 0x61 + 10)
        default: nil
        }
    }
}
