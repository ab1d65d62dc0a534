/// Percent-decoding of request paths and query strings, done by MicroHTTP itself (libmicrohttpd's own
/// unescaping is switched off) so that routing and static files see each segment decoded on its own.
enum PercentDecoding {
    /// Why a path or query text could not be decoded.
    enum Failure: Error {
        case malformedEscape
        case invalidUTF8
        case nulByte
    }

    /// Splits a raw path on `/` and decodes each segment. Empty segments (from `//` or a trailing `/`) are
    /// dropped. Fails on a malformed escape, invalid UTF-8 or a NUL byte anywhere.
    static func pathSegments(of rawPath: [UInt8]) throws(Failure) -> [String] {
        try rawPath.withUnsafeBufferPointer { (buffer) throws(Failure) -> [String] in try pathSegments(of: buffer) }
    }

    /// Splits a raw path on `/` and decodes each segment, reading the bytes where they are.
    static func pathSegments(of rawPath: UnsafeBufferPointer<UInt8>) throws(Failure) -> [String] {
        var segments: [String] = []
        segments.reserveCapacity(8)
        var start = rawPath.startIndex
        let count = rawPath.endIndex
        var index = rawPath.startIndex
        while index <= count {
            if index == count || rawPath[index] == UInt8(ascii: "/") {
                if index > start {
                    segments.append(try decode(UnsafeBufferPointer(rebasing: rawPath[start..<index]), plusIsSpace: false))
                }
                start = index + 1
            }
            index += 1
        }
        return segments
    }

    /// Decodes `%XX` escapes (and `+` as a space when asked).
    static func decode<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, plusIsSpace: Bool) throws(Failure) -> String
    where Bytes.Index == Int {
        var needsWork = false
        var isASCII = true
        for byte in bytes {
            if byte == UInt8(ascii: "%") || byte == 0 || (plusIsSpace && byte == UInt8(ascii: "+")) {
                needsWork = true
                break
            }
            if byte >= 0x80 { isASCII = false }
        }
        if !needsWork {
            // Plain ASCII (the common case) is valid UTF-8 by construction: skip validation.
            if isASCII { return String(decoding: bytes, as: UTF8.self) }
            guard let text = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8 }
            return text
        }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex,
                    let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
                else { throw .malformedEscape }
                output.append(high << 4 | low)
                index += 3
            } else if plusIsSpace && byte == UInt8(ascii: "+") {
                output.append(UInt8(ascii: " "))
                index += 1
            } else {
                output.append(byte)
                index += 1
            }
        }
        if output.contains(0) { throw .nulByte }
        guard let text = String(validating: output, as: UTF8.self) else { throw .invalidUTF8 }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
