import JSONPatch
import MVVMR
import Testing

// A store keeps a record as `jsonBytes`, written straight into a buffer; restore and the session log read it with
// `InputRecord(json:)`. The bytes must be exactly the JSON tree's (`json.jsonBytes`), for every kind of input and
// every optional field, so that logs written either way read alike and digest alike.

struct InputRecordBytesTests {
    static let inputs: [SessionInput] = [
        .start(unit: "login", parameters: [:], value: nil, seed: 0, wallClock: .zero),
        .start(
            unit: "greeting", parameters: ["name": "Zoë \"Z\"", "a": "\u{1}\n"], value: ["n": 1, "s": "x"],
            seed: 0x0123_4567_89ab_cdef, wallClock: .nanoseconds(1_764_590_000_123_456_789)),
        .bind(unit: "counters", parameters: [:]),
        .bind(unit: "employees", parameters: ["id": "7", "b": "", "c": "ü/~"]),
        .action(unit: "counters", name: "increment", value: 3, clientRevision: nil),
        .action(unit: "login", name: "form.password", value: "p\u{7f}\"\\", clientRevision: 12),
        .action(unit: "main", name: "tap", value: .null, clientRevision: 0),
        .navigate(.back),
        .navigate(.forward),
        .navigate(.open("settings", parameters: [:])),
        .navigate(.open("employees", parameters: ["id": "42", "sort": "name"])),
        .timer(0),
        .timer(Int.max),
        .work(3, ["rows": [1, 2.5, true, .null], "page": 2]),
        .work(-1, "failed: \u{2028}"),
        .rebind(unit: "dashboard", revision: 17),
        .topic(name: "board", value: ["author": "guest-3f2a", "text": "Zoë says \"hi\"\n\u{2028}"]),
        .topic(name: "prices_eur-1", value: [1.5, .null, false]),
        .topic(name: "b", value: .null),
        // Every string all six-byte escapes, every number at its longest: the room `jsonBytes` sizes is still enough.
        .start(
            unit: "\u{1}\u{2}", parameters: ["\u{3}": "\u{4}\u{5}", "\u{6}\u{7}": ""], value: [.int(.min), "\u{1f}"],
            seed: .max, wallClock: .nanoseconds(Int64.min)),
        .action(unit: "\u{1}", name: "\u{1}\u{2}\u{3}", value: .double(-2.2250738585072014e-308), clientRevision: .min),
        .navigate(.open("\u{1b}", parameters: ["\u{1c}": "\u{1d}"])),
        .work(.min, .string("\u{0}\u{0}\u{0}")),
        .rebind(unit: "\u{10}", revision: .min),
    ]

    @Test(arguments: inputs)
    func theBytesAreTheJSONTreesForEveryInput(input: SessionInput) throws {
        #expect(input.encodedCapacity >= input.json.jsonBytes.count, "\(input.json.jsonString)")
        let plain = InputRecord(number: 1, time: .zero, input: input, digests: [:])
        #expect(plain.jsonBytes == plain.json.jsonBytes, "\(plain.json.jsonString)")
        let full = InputRecord(
            number: 123_456, time: .nanoseconds(9_876_543_210), input: input,
            digests: ["counters": 0, "main": .max, "z\"q": 0x00ab_0000_0000_00cd],
            annotation: ["key": "k-1", "digest": "abc", "n": [1, 2]], sequence: 99,
            revisions: ["main": 4, "counters": 0, "z\"q": -1, "\u{1}": .min])
        #expect(full.jsonBytes == full.json.jsonBytes, "\(full.json.jsonString)")
        let extreme = InputRecord(
            number: .min, time: .nanoseconds(Int64.min), input: input, digests: ["\u{1}\u{2}": .max],
            annotation: ["\u{3}": .int(.min)], sequence: .min, revisions: ["\u{1}\u{2}": .min])
        #expect(extreme.jsonBytes == extreme.json.jsonBytes, "\(extreme.json.jsonString)")
        #expect(extreme.encodedCapacity >= extreme.json.jsonBytes.count)
        #expect(try InputRecord(json: JSONValue(parsing: full.jsonBytes)) == full)
        let onePage = InputRecord(
            number: 2, time: .milliseconds(1), input: input, digests: ["counters": 0x8292_a3f8_3731_23ee],
            sequence: 1_001, revisions: ["counters": 1_000])
        #expect(onePage.jsonBytes == onePage.json.jsonBytes, "\(onePage.json.jsonString)")
    }
}
