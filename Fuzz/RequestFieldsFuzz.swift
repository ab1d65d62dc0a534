// libFuzzer target for the request fields the page protocol reads: an action body's `action`, `value` and `rev`
// (`WireActionRequest`, Sources/MVVMRProtocol) and `Last-Event-ID` (Sources/MVVMRServer/Protocol/RequestParsing.swift).
//
// Fuzz/run.sh compiles RequestParsing.swift and this file into one module against JSONPatch and MVVMRProtocol modules
// built with the same instrumentation. The first byte chooses what the rest is; each case checks properties, and a violated one traps
// on purpose (libFuzzer saves the input):
// - 0, an action body (JSON text): its fields agree with a reference reading, the server's reader of a body of
//   scalars straight from its bytes reads what the whole parse reads (or leaves it to it), and the request written
//   back by its own encoder and parsed again reads the same;
// - 1, a Last-Event-ID text: the parse agrees with a reference written over the digits as text;
// - 2, eight bytes as a Double's bits: `rev` accepts exactly the whole doubles in 0...2^53, as the number they are,
//   also after the double's JSON text is parsed again; and `String(n)` for a non-negative Int reads back as n.
import JSONPatch
import MVVMRProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch data[0] % 3 {
    case 0: checkActionBody(input)
    case 1: checkLastEventID(String(decoding: input, as: UTF8.self))
    default: checkRevisionDouble(input)
    }
    return 0
}

private func checkActionBody(_ bytes: [UInt8]) {
    // The server's shortcut: read from the bytes when the body is an object of scalars. What it reads (a request or
    // a refusal) must be what the whole parse and `init(json:)` give.
    let fromBytes = Result { () throws(WireDecodingError) -> WireActionRequest? in
        try WireActionRequest(scalarMembersOf: bytes)
    }
    guard let body = try? JSONValue(parsing: bytes, maxDepth: 64) else {
        if case .success(nil) = fromBytes { return }
        fuzzFailure("the byte reader read a body the parser refuses", bytes)
    }
    let fields: WireActionRequest
    do throws(WireDecodingError) {
        fields = try WireActionRequest(json: body)
    } catch {
        if case .failure(let refusal) = fromBytes, refusal != error {
            fuzzFailure("the byte reader refused with \(refusal.message), the whole parse with \(error.message)", bytes)
        }
        if case .success(.some) = fromBytes { fuzzFailure("the byte reader read a body the whole parse refuses", bytes) }
        // Refused: the reference must find something wrong too.
        if case .object(let object) = body, case .string? = object["action"], referenceRevision(object["rev"]) != nil {
            fuzzFailure("a well-formed action body was refused: \(error.message)", bytes)
        }
        return
    }
    switch fromBytes {
    case .success(nil): break
    case .success(let read?) where read == fields: break
    default: fuzzFailure("the byte reader read other fields than the whole parse", bytes)
    }
    guard case .object(let object) = body, case .string(let action)? = object["action"], action == fields.action,
        fields.value == (object["value"] ?? .null), let expected = referenceRevision(object["rev"]),
        expected == fields.rev
    else { fuzzFailure("the fields differ from the reference reading", bytes) }
    // Written back by the request's own encoder (as the Swift client sends it), the fields read the same.
    let text = fields.jsonBytes
    guard let again = try? WireActionRequest(parsing: text, maxDepth: 64), again == fields
    else { fuzzFailure("the fields written back as a body read differently", text) }
}

/// The revision a `rev` member stands for, `.some(nil)` for none, or `nil` when it must be refused: a non-negative
/// integer, or a whole non-negative double no larger than 2^53.
private func referenceRevision(_ field: JSONValue?) -> Int?? {
    switch field {
    case nil, .null?: return .some(nil)
    case .int(let value)?: return value >= 0 ? .some(value) : nil
    case .double(let value)?:
        guard value >= 0, value <= 9_007_199_254_740_992, value == value.rounded(.towardZero) else { return nil }
        return .some(Int(value))
    default: return nil
    }
}

private func checkLastEventID(_ text: String) {
    let parsed = Result { () throws(RequestFieldError) -> Int? in try RequestParsing.lastEventID(text) }
    let expected = referenceLastEventID(text)
    switch (parsed, expected) {
    case (.success(let identifier), .some(let reference)) where identifier == reference: return
    case (.failure, nil): return
    default: fuzzFailure("Last-Event-ID \(parsed) but the reference says \(String(describing: expected))", Array(text.utf8))
    }
}

/// Last-Event-ID by another route: trim spaces and tabs, require digits, drop leading zeros, and compare the digits
/// with Int.max's as text (a longer or larger number is ahead of everything: Int.max). `.some(nil)` is no id.
private func referenceLastEventID(_ text: String) -> Int?? {
    if text.isEmpty { return .some(nil) }
    let blank: Set<Character> = [" ", "\t"]
    var characters = Array(text)
    while let first = characters.first, blank.contains(first) { characters.removeFirst() }
    while let last = characters.last, blank.contains(last) { characters.removeLast() }
    guard !characters.isEmpty, characters.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
    let digits = String(characters.drop { $0 == "0" })
    let largest = String(Int.max)
    if digits.count > largest.count || (digits.count == largest.count && digits > largest) { return .some(Int.max) }
    return .some(digits.isEmpty ? 0 : Int(digits))
}

private func checkRevisionDouble(_ bytes: [UInt8]) {
    guard bytes.count >= 8 else { return }
    var bits: UInt64 = 0
    for byte in bytes.prefix(8) { bits = bits << 8 | UInt64(byte) }
    let number = Double(bitPattern: bits)
    let revision = Result { () throws(WireDecodingError) -> Int? in try WireActionRequest.revision(.double(number)) }
    let mustAccept = number >= 0 && number <= 9_007_199_254_740_992 && number == number.rounded(.towardZero)
    switch revision {
    case .success(let accepted?):
        guard mustAccept, Double(accepted) == number else { fuzzFailure("rev \(number) read as \(accepted)", bytes) }
    case .success(nil):
        fuzzFailure("rev \(number) read as none", bytes)
    case .failure:
        if mustAccept { fuzzFailure("rev \(number) refused", bytes) }
    }
    // The same double as JSON text, parsed as a body's member is: the same answer (the text keeps it a double).
    if number.isFinite, let reparsed = try? JSONValue(parsing: JSONValue.double(number).jsonBytes, maxDepth: 4) {
        let again = Result { () throws(WireDecodingError) -> Int? in try WireActionRequest.revision(reparsed) }
        guard again == revision else { fuzzFailure("rev \(number) reads differently from its JSON text", bytes) }
    }
    // Any non-negative Int written in decimal is that event id.
    let identifier = Int(truncatingIfNeeded: bits) & Int.max
    guard (try? RequestParsing.lastEventID(String(identifier))) == identifier else {
        fuzzFailure("Last-Event-ID \(identifier) does not read back", bytes)
    }
}

private func fuzzFailure(_ message: String, _ input: [UInt8]) -> Never {
    print("RequestFieldsFuzz property failed: \(message)\ninput: \(String(decoding: input.prefix(2000), as: UTF8.self))")
    // Deliberate trap: libFuzzer reports it as a crash and saves the input.
    fatalError(message)
}
