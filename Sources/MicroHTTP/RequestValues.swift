internal import CMicroHTTPD

/// A request's header fields, cookies and query parameters, read from the library at once.
///
/// The C shim packs the header fields and query parameters into one buffer (`mvvmr_mhd_pack_values`): the
/// header fields stay in it, and a header's `String` is made only when a handler looks it up. Cookies and
/// query parameters, which most requests do not carry, are decoded at once. Cookies are read from the
/// `Cookie` fields here, not from the library's parse, which MicroHTTP turns off (see
/// `mvvmr_mhd_add_decoy_cookie`).
struct RequestValues {
    var headers: HTTPHeaders
    var cookies: [String: String] = [:]
    var query: [QueryItem] = []

    /// Reads a connection's values from the library.
    init(of connection: OpaquePointer) {
        self.init(packed: Self.packed(connection))
    }

    /// Decodes values already packed (``packed(_:)``, or any bytes in that form: tests and the fuzzer in Fuzz/
    /// give it their own): the header fields stay in the packing.
    init(packed values: PackedValues) {
        headers = HTTPHeaders(packed: values)
        values.forEachEntry { entry in
            if entry.kind != PackedValues.headerKind {
                add(entry, of: values)
            } else if entry.key.count == 6, let value = entry.value,
                values.key(entry.key, equalsIgnoringCase: Self.cookieName)
            {
                addCookies(in: value, of: values)
            }
            return true
        }
    }

    /// A connection's header fields and query parameters, packed by the C shim.
    static func packed(_ connection: OpaquePointer) -> PackedValues {
        let kinds = MHD_ValueKind.HEADER_KIND.rawValue | MHD_ValueKind.GET_ARGUMENT_KIND.rawValue
        return PackedValues(bytes: pack(connection, kinds: kinds))
    }

    /// The packed values of some kinds, in a buffer of exactly their size (none when there are none).
    private static func pack(_ connection: OpaquePointer, kinds: UInt32) -> [UInt8] {
        let stackCapacity = 1024
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: stackCapacity) { buffer -> [UInt8] in
            guard let base = buffer.baseAddress else { return [] }
            let needed = mvvmr_mhd_pack_values(connection, kinds, base, stackCapacity)
            if needed <= stackCapacity { return Array(UnsafeBufferPointer(start: base, count: needed)) }
            return [UInt8](unsafeUninitializedCapacity: needed) { bytes, count in
                guard let base = bytes.baseAddress else { return }
                // The values cannot change between the calls (this thread serves the connection); should the
                // second call still need more, the packing is cut at a whole value's boundary by the reader.
                count = min(needed, mvvmr_mhd_pack_values(connection, kinds, base, needed))
            }
        }
    }

    /// `cookie`, in a static string's bytes (which live as long as the program).
    private static var cookieName: UnsafeBufferPointer<UInt8> {
        let name: StaticString = "cookie"
        return UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
    }

    /// Adds the cookies of one `Cookie` field value (`a=1; b="two"; flag`): pairs separated by `;`, names and
    /// values trimmed of spaces and tabs, one pair of double quotes around a value removed, a pair without `=`
    /// an empty value, pairs without a name skipped. The first cookie of a name wins.
    private mutating func addCookies(in range: Range<Int>, of values: PackedValues) {
        values.bytes.withUnsafeBufferPointer { bytes in
            var pairStart = range.lowerBound
            while pairStart < range.upperBound {
                var pairEnd = pairStart
                while pairEnd < range.upperBound && bytes[pairEnd] != UInt8(ascii: ";") { pairEnd += 1 }
                var equals = pairStart
                while equals < pairEnd && bytes[equals] != UInt8(ascii: "=") { equals += 1 }
                let name = Self.trimmed(pairStart..<equals, in: bytes)
                var value = equals < pairEnd ? Self.trimmed(equals + 1..<pairEnd, in: bytes) : pairEnd..<pairEnd
                let quote = UInt8(ascii: "\"")
                if value.count >= 2 && bytes[value.lowerBound] == quote && bytes[value.upperBound - 1] == quote {
                    value = value.lowerBound + 1..<value.upperBound - 1
                }
                if !name.isEmpty {
                    let nameText = values.string(name)
                    if cookies[nameText] == nil { cookies[nameText] = values.string(value) }
                }
                pairStart = pairEnd + 1
            }
        }
    }

    private static func trimmed(_ range: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper && (bytes[lower] == 0x20 || bytes[lower] == 0x09) { lower += 1 }
        while upper > lower && (bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09) { upper -= 1 }
        return lower..<upper
    }

    private mutating func add(_ entry: PackedValues.Entry, of values: PackedValues) {
        switch entry.kind {
        case UInt8(MHD_ValueKind.GET_ARGUMENT_KIND.rawValue):
            // The library already turned `+` into spaces (escapes are left to us); undecodable parameters
            // are dropped.
            guard let name = values.percentDecoded(entry.key) else { return }
            guard let valueRange = entry.value else {
                query.append(QueryItem(name: name, value: nil))
                return
            }
            guard let value = values.percentDecoded(valueRange) else { return }
            query.append(QueryItem(name: name, value: value))
        default:
            break
        }
    }
}

/// Request values as the C shim packs them: for each, its kind (1 byte), key length and value length
/// (4 bytes each, host order; `0xFFFFFFFF` for no value), then the key's and the value's bytes.
struct PackedValues: Sendable {
    /// One value's place in the buffer.
    struct Entry {
        let kind: UInt8
        let key: Range<Int>
        /// `nil` for a key without a value (`?flag`).
        let value: Range<Int>?
    }

    /// The kind of a header field (`MHD_HEADER_KIND`).
    /// (Computed, not a stored `static let`: a stored one is a lazily initialised global, checked on every
    /// read, and this is read for every value of every request.)
    static var headerKind: UInt8 { UInt8(truncatingIfNeeded: MHD_ValueKind.HEADER_KIND.rawValue) }

    let bytes: [UInt8]

    /// Calls `body` with each value in order until it returns `false`. A truncated tail is ignored.
    func forEachEntry(_ body: (Entry) -> Bool) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while let (entry, next) = Self.entry(at: offset, in: raw) {
                if !body(entry) { return }
                offset = next
            }
        }
    }

    /// The value packed at `offset` of `raw` (this type's bytes) and the offset of the next one; `nil` at the end
    /// or at a truncated tail. For loops that read the bytes directly (``RequestFraming``), where a closure per
    /// value would cost more than the check itself.
    @inline(__always)
    static func entry(at offset: Int, in raw: UnsafeRawBufferPointer) -> (entry: Entry, next: Int)? {
        guard raw.count - offset >= 9 else { return nil }
        let keyLength = Int(raw.loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self))
        let valueField = raw.loadUnaligned(fromByteOffset: offset + 5, as: UInt32.self)
        let valueLength = valueField == UInt32.max ? 0 : Int(valueField)
        let keyStart = offset + 9
        let valueStart = keyStart + keyLength
        let end = valueStart + valueLength
        guard end <= raw.count else { return nil }
        let value = valueField == UInt32.max ? nil : valueStart..<end
        let entry = Entry(kind: raw[offset], key: keyStart..<valueStart, value: value)
        return (entry, end)
    }

    /// Calls `body` with each header field (entries of kind header) in order until it returns `false`.
    func forEachHeader(_ body: (Entry) -> Bool) {
        forEachEntry { entry in entry.kind == Self.headerKind ? body(entry) : true }
    }

    /// Bytes of the buffer as text (invalid UTF-8 is repaired, as `String(cString:)` does).
    func string(_ range: Range<Int>) -> String {
        bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    /// Bytes of the buffer percent-decoded, or `nil` when they cannot be.
    func percentDecoded(_ range: Range<Int>) -> String? {
        bytes.withUnsafeBufferPointer { try? PercentDecoding.decode(UnsafeBufferPointer(rebasing: $0[range]), plusIsSpace: false) }
    }

    /// Whether the key at `range` equals `name`, ignoring ASCII case.
    func key(_ range: Range<Int>, equalsIgnoringCase name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard range.count == name.count else { return false }
        return bytes.withUnsafeBufferPointer { HTTPHeaders.bytesEqualIgnoringASCIICase(UnsafeBufferPointer(rebasing: $0[range]), name) }
    }
}
