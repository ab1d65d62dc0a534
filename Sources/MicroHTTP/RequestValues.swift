internal import CMicroHTTPD

/// A request's header fields, cookies and query parameters, read from the library at once.
///
/// The C shim packs the values into one buffer (`mvvmr_mhd_pack_values`): the header fields stay in it,
/// and a header's `String` is made only when a handler looks it up. Cookies and query parameters, which
/// most requests do not carry, are decoded at once.
struct RequestValues {
    var headers: HTTPHeaders
    var cookies: [String: String] = [:]
    var query: [QueryItem] = []

    init(of connection: OpaquePointer) {
        let kinds = MHD_ValueKind.HEADER_KIND.rawValue | MHD_ValueKind.COOKIE_KIND.rawValue
            | MHD_ValueKind.GET_ARGUMENT_KIND.rawValue
        self.init(packed: PackedValues(bytes: Self.pack(connection, kinds: kinds)))
    }

    /// Reads values packed as the C shim packs them; apart from the connection, so tests and the fuzzer in
    /// Fuzz/ can give it any bytes.
    init(packed values: PackedValues) {
        headers = HTTPHeaders(packed: values)
        values.forEachEntry { entry in
            if entry.kind != PackedValues.headerKind { add(entry, of: values) }
            return true
        }
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

    private mutating func add(_ entry: PackedValues.Entry, of values: PackedValues) {
        switch entry.kind {
        case UInt8(MHD_ValueKind.COOKIE_KIND.rawValue):
            let name = values.string(entry.key)
            if cookies[name] == nil { cookies[name] = entry.value.map(values.string) ?? "" }
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
    static let headerKind = UInt8(MHD_ValueKind.HEADER_KIND.rawValue)

    let bytes: [UInt8]

    /// Calls `body` with each value in order until it returns `false`. A truncated tail is ignored.
    func forEachEntry(_ body: (Entry) -> Bool) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while raw.count - offset >= 9 {
                let kind = raw[offset]
                let keyLength = Int(raw.loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self))
                let valueField = raw.loadUnaligned(fromByteOffset: offset + 5, as: UInt32.self)
                let valueLength = valueField == UInt32.max ? 0 : Int(valueField)
                let keyStart = offset + 9
                let end = keyStart + keyLength + valueLength
                guard end <= raw.count else { return }
                let valueStart = keyStart + keyLength
                let entry = Entry(
                    kind: kind, key: keyStart..<valueStart,
                    value: valueField == UInt32.max ? nil : valueStart..<end)
                if !body(entry) { return }
                offset = end
            }
        }
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
