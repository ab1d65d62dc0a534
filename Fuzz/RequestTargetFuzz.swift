// libFuzzer target for what MicroHTTP itself parses of a request: the path (split on `/`, each segment
// percent-decoded), query values (percent-decoded) and the values the C shim packs for Swift (header fields, cookies
// and query parameters as libmicrohttpd split them), read by RequestValues and HTTPHeaders.
//
// Fuzz/run.sh builds the MicroHTTP module (with -enable-testing, so its internal parsers are visible here) with the
// same instrumentation and links this file against it. The first byte chooses what the rest is; each case checks
// properties, and a violated one traps on purpose (libFuzzer saves the input):
// - 0, a raw path: the segments agree with a reference split-and-decode; none is empty; a segment holds `/` only
//   where the raw path encoded one; percent-encoding the segments and parsing again gives them back;
// - 1, query text: decoding agrees with the reference, with and without `+` as a space; any text percent-encoded
//   decodes back to itself;
// - 2, arbitrary bytes as a packing: reading never leaves the buffer, entries tile it in order, and header lookups
//   find the first field of a name whatever its case;
// - 3, entries described by the bytes, packed as the shim packs them: the headers, cookies (first wins) and query
//   parameters (decoded; undecodable ones dropped) read back as the entries say, also from a truncated packing.
@testable import MicroHTTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch data[0] % 4 {
    case 0: checkPath(input)
    case 1: checkQueryText(input)
    case 2: checkArbitraryPacking(input)
    default: checkDescribedPacking(input)
    }
    return 0
}

// MARK: - Paths and percent-decoding

/// Percent-decoding by the book: `%` and two hex digits is a byte, `+` a space when asked, anything else itself; the
/// result must be UTF-8 without NUL. `nil` for anything malformed.
private func referenceDecode(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool) -> String? {
    func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
    var output: [UInt8] = []
    var rest = bytes[...]
    while let byte = rest.popFirst() {
        if byte == UInt8(ascii: "%") {
            guard let high = rest.popFirst().flatMap(hex), let low = rest.popFirst().flatMap(hex) else { return nil }
            output.append(high * 16 + low)
        } else {
            output.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
        }
    }
    if output.contains(0) { return nil }
    return String(validating: output, as: UTF8.self)
}

/// Escapes every byte but the unreserved ones (RFC 3986), so the text decodes back to `text` and holds no `/`.
private func percentEncoded(_ text: String) -> [UInt8] {
    let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
    let digits = Array("0123456789ABCDEF".utf8)
    var output: [UInt8] = []
    for byte in text.utf8 {
        if unreserved.contains(byte) {
            output.append(byte)
        } else {
            output += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 15)]]
        }
    }
    return output
}

private func checkPath(_ rawPath: [UInt8]) {
    let segments = try? PercentDecoding.pathSegments(of: rawPath)
    let pieces = rawPath.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true)
    let decodedPieces = pieces.map { referenceDecode($0, plusIsSpace: false) }
    let reference: [String]? = decodedPieces.contains { $0 == nil } ? nil : decodedPieces.compactMap { $0 }
    guard segments == reference else {
        fuzzFailure("path segments \(String(describing: segments)) but the reference says \(String(describing: reference))", rawPath)
    }
    guard let segments else { return }
    for (segment, piece) in zip(segments, pieces) {
        if segment.isEmpty { fuzzFailure("an empty segment", rawPath) }
        // On the bytes: as a String, a combining mark after `%2F` joins the `F` into one Character, and a
        // Character search for "%2f" misses it (found by this target: `/c%2F\u{06DB}/`).
        let bytes = Array(piece)
        let encodesSlash = bytes.indices.dropLast(2).contains { index in
            bytes[index] == UInt8(ascii: "%") && bytes[index + 1] == UInt8(ascii: "2") && bytes[index + 2] | 0x20 == UInt8(ascii: "f")
        }
        if segment.utf8.contains(UInt8(ascii: "/")) && !encodesSlash {
            fuzzFailure("a segment holds a '/' the raw path did not encode", rawPath)
        }
    }
    var rebuilt: [UInt8] = []
    for segment in segments { rebuilt += [UInt8(ascii: "/")] + percentEncoded(segment) }
    guard (try? PercentDecoding.pathSegments(of: rebuilt)) == segments else {
        fuzzFailure("encoded segments do not parse back to themselves", rebuilt)
    }
}

private func checkQueryText(_ bytes: [UInt8]) {
    for plusIsSpace in [false, true] {
        let decoded = try? PercentDecoding.decode(bytes, plusIsSpace: plusIsSpace)
        let reference = referenceDecode(bytes[...], plusIsSpace: plusIsSpace)
        guard decoded == reference else {
            fuzzFailure("decode (plus is space: \(plusIsSpace)) \(String(describing: decoded)) but the reference says \(String(describing: reference))", bytes)
        }
    }
    // Any text without NUL, percent-encoded, decodes back to itself.
    let text = String(decoding: bytes.filter { $0 != 0 }, as: UTF8.self)
    let encoded = percentEncoded(text)
    guard (try? PercentDecoding.decode(encoded, plusIsSpace: true)) == text else {
        fuzzFailure("percent-encoded text does not decode back to itself", encoded)
    }
}

// MARK: - Packed values

/// The kinds the shim packs (libmicrohttpd's `MHD_ValueKind` values).
private let headerKind: UInt8 = 1, cookieKind: UInt8 = 2, queryKind: UInt8 = 8

private func checkArbitraryPacking(_ bytes: [UInt8]) {
    let packed = PackedValues(bytes: bytes)
    var next = 0
    var headerEntries: [PackedValues.Entry] = []
    packed.forEachEntry { entry in
        guard entry.key.lowerBound == next + 9, entry.key.upperBound <= bytes.count,
            (entry.value?.lowerBound ?? entry.key.upperBound) == entry.key.upperBound,
            (entry.value?.upperBound ?? entry.key.upperBound) <= bytes.count
        else { fuzzFailure("an entry outside the buffer or out of order", bytes) }
        next = entry.value?.upperBound ?? entry.key.upperBound
        if entry.kind == headerKind { headerEntries.append(entry) }
        return true
    }
    let values = RequestValues(packed: packed)
    guard values.headers.count == headerEntries.count, values.headers.fields.count == headerEntries.count else {
        fuzzFailure("the header count differs from the header entries", bytes)
    }
    // Names that are not ASCII are left out: such a name read as text is repaired (U+FFFD) or case-mapped beyond
    // ASCII, so looking it up by that text need not find the raw bytes, and field names are ASCII tokens anyway.
    for field in values.headers.fields.prefix(16) where field.name.utf8.allSatisfy({ $0 < 0x80 }) {
        let first = values.headers.fields.first { HTTPHeaders.equalIgnoringASCIICase($0.name, field.name) }
        guard values.headers[field.name] == first?.value, values.headers[field.name.uppercased()] == first?.value
        else { fuzzFailure("header lookup of \(field.name) does not find its first field", bytes) }
    }
}

/// One value to pack: its kind, key and value (`nil`: a key alone, as `?flag`).
private struct DescribedEntry {
    let kind: UInt8
    let key: [UInt8]
    let value: [UInt8]?
}

/// Reads entries from the input: a control byte (kind in its low two bits, "no value" in bit 2), a key length and a
/// value length (one byte each, up to 31), then the bytes.
private func describedEntries(_ bytes: [UInt8]) -> [DescribedEntry] {
    var entries: [DescribedEntry] = []
    var rest = bytes[...]
    while rest.count >= 3 {
        let control = rest.removeFirst(), keyLength = Int(rest.removeFirst() & 31), valueLength = Int(rest.removeFirst() & 31)
        let key = Array(rest.prefix(keyLength))
        rest = rest.dropFirst(keyLength)
        let value = Array(rest.prefix(valueLength))
        rest = rest.dropFirst(valueLength)
        let kind = [headerKind, cookieKind, queryKind, headerKind][Int(control & 3)]
        entries.append(DescribedEntry(kind: kind, key: key, value: control & 4 == 0 ? value : nil))
    }
    return entries
}

/// The shim's packing (`mvvmr_mhd_pack_value` in Sources/CMicroHTTPD/shim.h), written again.
private func pack(_ entries: [DescribedEntry]) -> [UInt8] {
    var bytes: [UInt8] = []
    func appendLength(_ length: UInt32) { withUnsafeBytes(of: length) { bytes += $0 } }
    for entry in entries {
        bytes.append(entry.kind)
        appendLength(UInt32(entry.key.count))
        appendLength(entry.value.map { UInt32($0.count) } ?? UInt32.max)
        bytes += entry.key + (entry.value ?? [])
    }
    return bytes
}

private func checkDescribedPacking(_ bytes: [UInt8]) {
    let entries = describedEntries(bytes)
    let packing = pack(entries)
    check(RequestValues(packed: PackedValues(bytes: packing)), against: entries, packing)
    // Cut anywhere, the packing reads as the entries that fit whole.
    let cut = Int(bytes.first ?? 0) % (packing.count + 1)
    var whole: [DescribedEntry] = []
    var used = 0
    for entry in entries {
        used += 9 + entry.key.count + (entry.value?.count ?? 0)
        if used > cut { break }
        whole.append(entry)
    }
    check(RequestValues(packed: PackedValues(bytes: Array(packing.prefix(cut)))), against: whole, packing)
}

/// The cookies of the `Cookie` header fields, read the plain way: the library's own cookie entries are ignored
/// (MicroHTTP parses the fields itself, see `mvvmr_mhd_add_decoy_cookie`); pairs split at `;`, name and value
/// trimmed of spaces and tabs, one pair of quotes around a value removed, no `=` an empty value, an empty name
/// skipped, the first of a name kept.
private func referenceCookies(_ entries: [DescribedEntry]) -> [String: String] {
    func isCookieName(_ key: [UInt8]) -> Bool {
        key.count == 6 && zip(key, Array("cookie".utf8)).allSatisfy { ($0 >= 65 && $0 <= 90 ? $0 | 0x20 : $0) == $1 }
    }
    func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == 0x20 || first == 0x09 { slice.removeFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice.removeLast() }
        return slice
    }
    var cookies: [String: String] = [:]
    for entry in entries where entry.kind == headerKind && isCookieName(entry.key) {
        guard let field = entry.value else { continue }
        for pair in field.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false) {
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            let name = trimmed(pair[..<(equals ?? pair.endIndex)])
            var value = equals.map { trimmed(pair[pair.index(after: $0)...]) } ?? []
            if value.count >= 2 && value.first == UInt8(ascii: "\"") && value.last == UInt8(ascii: "\"") {
                value = value.dropFirst().dropLast()
            }
            let nameText = String(decoding: name, as: UTF8.self)
            if !name.isEmpty && cookies[nameText] == nil { cookies[nameText] = String(decoding: value, as: UTF8.self) }
        }
    }
    return cookies
}

private func check(_ values: RequestValues, against entries: [DescribedEntry], _ packing: [UInt8]) {
    let text = { (bytes: [UInt8]) in String(decoding: bytes, as: UTF8.self) }
    let headers = entries.filter { $0.kind == headerKind }.map { HTTPHeader(name: text($0.key), value: text($0.value ?? [])) }
    guard values.headers.fields == headers else { fuzzFailure("the header fields differ from the packed ones", packing) }
    guard values.cookies == referenceCookies(entries) else {
        fuzzFailure("the cookies differ from those of the Cookie fields (first wins)", packing)
    }
    var query: [QueryItem] = []
    for entry in entries where entry.kind == queryKind {
        guard let name = referenceDecode(entry.key[...], plusIsSpace: false) else { continue }
        guard let value = entry.value else {
            query.append(QueryItem(name: name, value: nil))
            continue
        }
        guard let decoded = referenceDecode(value[...], plusIsSpace: false) else { continue }
        query.append(QueryItem(name: name, value: decoded))
    }
    guard values.query == query else { fuzzFailure("the query parameters differ from the packed ones", packing) }
}

private func fuzzFailure(_ message: String, _ input: [UInt8]) -> Never {
    print("RequestTargetFuzz property failed: \(message)\ninput: \(input.prefix(512).map { String($0, radix: 16) })")
    // Deliberate trap: libFuzzer reports it as a crash and saves the input.
    fatalError(message)
}
