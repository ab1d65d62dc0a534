/// Session ids: 144 bits from the system's CSPRNG, written as 24 URL-safe base64 characters.
///
/// `SystemRandomNumberGenerator` reads `getrandom(2)` on Linux (the kernel's CSPRNG), which is what the
/// protocol requires of session ids.
public enum SessionIdentifier {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// For each byte value, whether it is in `alphabet`: a well-formedness check is a table look-up per byte.
    private static let isAlphabetByte: [Bool] = (0...255).map { alphabet.contains(UInt8($0)) }

    /// A new random id.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        var random: [UInt8] = []
        random.reserveCapacity(24)
        for _ in 0..<3 {
            let word = generator.next()
            for shift in stride(from: 0, to: 64, by: 8) { random.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        var text: [UInt8] = []
        text.reserveCapacity(24)
        for chunk in stride(from: 0, to: 18, by: 3) {
            let value = UInt32(random[chunk]) << 16 | UInt32(random[chunk + 1]) << 8 | UInt32(random[chunk + 2])
            for shift in [18, 12, 6, 0] { text.append(alphabet[Int((value >> UInt32(shift)) & 63)]) }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether text has the shape of a session id (so that junk is refused before any lookup).
    /// - Parameter text: the candidate.
    /// - Returns: `true` for 24 URL-safe base64 characters.
    public static func isWellFormed(_ text: String) -> Bool {
        let bytes = text.utf8
        guard bytes.count == 24 else { return false }
        // This runs on every request that carries an id: read the bytes in place when they are contiguous.
        if let checked = bytes.withContiguousStorageIfAvailable({ allURLSafeBase64($0) }) { return checked }
        return allURLSafeBase64(Array(bytes))
    }

    private static func allURLSafeBase64<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        isAlphabetByte.withUnsafeBufferPointer { table in bytes.allSatisfy { table[Int($0)] } }
    }

    /// The id shortened for logs: the first 6 characters and an ellipsis (never the whole id).
    /// - Parameter identifier: the id.
    /// - Returns: the shortened form.
    public static func redacted(_ identifier: String) -> String {
        String(identifier.prefix(6)) + redactionMark
    }

    /// What ends a redacted id, in place of the rest of it.
    static let redactionMark = "…"
}
