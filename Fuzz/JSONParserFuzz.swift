// libFuzzer target for the JSON parser, encoder and the patch engine.
//
// Compiled together with Sources/JSONPatch/*.swift into one module by Fuzz/run.sh, so the
// library's types are used without an import. Any crash, sanitizer report or violated
// invariant (which traps on purpose) is a finding.
//
// Invariants checked for every input that parses:
// - encode(parse(x)) parses again to an equal value, and encoding is a fixed point;
// - a value equals itself and hashes like its re-parsed copy;
// - diff(value, reparsed) is empty, and applying diff(a, b) to a gives b for a derived pair;
// - if the input is a JSON array, applying it as a patch never crashes (it may throw);
// - input read as JSON Pointer text that parses prints back to an equal pointer;
// - a double's intValue, when it has one, is exactly the double, strictly between -2^63 and 2^63;
// - text that `readScalarMembers` reads is an object of those scalar members, as the parser reads it.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    // The same bytes as JSON Pointer text: escaping must round-trip.
    if let pointer = try? JSONPointer(String(decoding: bytes, as: UTF8.self)) {
        guard let again = try? JSONPointer(pointer.description), again == pointer else {
            fuzzFailure("pointer does not round-trip through its text form", Array(pointer.description.utf8))
        }
    }
    // The reader of an object of scalars (an action's body): when it reads the text, the text is that object.
    var members: [(String, JSONValue)] = []
    let isReadAsScalarMembers = JSONValue.readScalarMembers(of: Array(bytes)) { key, member in
        members.append((String(decoding: key, as: UTF8.self), member))
    }
    guard let value = try? JSONValue(parsing: bytes, maxDepth: 64) else {
        if isReadAsScalarMembers { fuzzFailure("the scalar-member reader read text the parser refuses", Array(bytes)) }
        // Rejections are fine; deep inputs must be rejected cleanly (checked by not crashing).
        return 0
    }
    if isReadAsScalarMembers {
        var rebuilt = JSONObject()
        for (key, member) in members { rebuilt[key] = member }
        guard case .object(let object) = value, object == rebuilt, members.allSatisfy({ isScalar($0.1) }) else {
            fuzzFailure("the scalar-member reader read other members than the parser", value.jsonBytes)
        }
    }
    if case .double(let number) = value, let integer = value.intValue,
        number <= -9_223_372_036_854_775_808.0 || Double(integer) != number
    {
        fuzzFailure("intValue \(integer) is not exactly the double \(number)", value.jsonBytes)
    }
    let encoded = value.jsonBytes
    guard let reparsed = try? JSONValue(parsing: encoded, maxDepth: 64) else {
        fuzzFailure("encoded output does not parse", encoded)
    }
    if reparsed != value || value != value {
        fuzzFailure("round trip changed the value", encoded)
    }
    if reparsed.hashValue != value.hashValue {
        fuzzFailure("equal values hash differently", encoded)
    }
    if reparsed.jsonBytes != encoded {
        fuzzFailure("encoding is not a fixed point", encoded)
    }
    if !JSONPatch.diff(from: value, to: reparsed).isEmpty {
        fuzzFailure("diff of equal values is not empty", encoded)
    }
    // A derived pair: the value against a copy with its first half of members / elements
    // altered, so diff and apply see related structures, not just identical ones.
    let altered = alter(value)
    let patch = JSONPatch.diff(from: value, to: altered)
    guard let applied = try? patch.apply(to: value), applied == altered else {
        fuzzFailure("apply(diff(a, b), a) != b", encoded)
    }
    if case .array = value, let patchFromInput = try? JSONPatch(json: value) {
        _ = try? patchFromInput.apply(to: ["a": [1, 2, ["b": nil]], "c": "d"])
    }
    return 0
}

/// Whether `value` is neither an array nor an object.
private func isScalar(_ value: JSONValue) -> Bool {
    switch value {
    case .array, .object: return false
    default: return true
    }
}

/// A deterministic variation of `value`: drops the last element or member, changes scalars,
/// reverses arrays of up to eight elements.
private func alter(_ value: JSONValue) -> JSONValue {
    switch value {
    case .array(var elements):
        if elements.count <= 8 { elements.reverse() }
        if !elements.isEmpty { elements[0] = alter(elements[0]) }
        if elements.count > 2 { elements.removeLast() }
        return .array(elements)
    case .object(var object):
        if let first = object.keys.first, let member = object[first] {
            object[first] = alter(member)
        }
        if object.count > 2, let last = object.keys.last { object[last] = nil }
        object["~fuzz/"] = .int(object.count)
        return .object(object)
    case .int(let integer):
        return .int(integer &+ 1)
    case .string(let text):
        return .string(text + "~")
    case .bool(let flag):
        return .bool(!flag)
    case .double(let number):
        return .double(number / 2)
    case .null:
        return .array([])
    }
}

private func fuzzFailure(_ message: String, _ encoded: [UInt8]) -> Never {
    print("JSONParserFuzz invariant failed: \(message)\nencoded: \(String(decoding: encoded.prefix(2000), as: UTF8.self))")
    // Deliberate trap: libFuzzer reports it as a crash and saves the input.
    fatalError(message)
}
