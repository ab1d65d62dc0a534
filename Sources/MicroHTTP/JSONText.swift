/// The bit of JSON text writing that MicroHTTP needs for its error bodies (it depends on no JSON library).
enum JSONText {
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `text` as a quoted, escaped JSON string.
    static func appendString(_ text: String, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): buffer.append(contentsOf: [92, 92])
            case 0x0A: buffer.append(contentsOf: [92, UInt8(ascii: "n")])
            case 0x0D: buffer.append(contentsOf: [92, UInt8(ascii: "r")])
            case 0x09: buffer.append(contentsOf: [92, UInt8(ascii: "t")])
            case 0..<0x20:
                buffer.append(contentsOf: Array(#"\u00"#.utf8))
                buffer.append(hexDigits[Int(byte >> 4)])
                buffer.append(hexDigits[Int(byte & 0x0F)])
            default: buffer.append(byte)
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }
}
