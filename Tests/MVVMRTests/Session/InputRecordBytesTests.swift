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
    ]

    @Test(arguments: inputs)
    func theBytesAreTheJSONTreesForEveryInput(input: SessionInput) throws {
        let plain = InputRecord(number: 1, time: .zero, input: input, digests: [:])
        #expect(plain.jsonBytes == plain.json.jsonBytes, "\(plain.json.jsonString)")
        let full = InputRecord(
            number: 123_456, time: .nanoseconds(9_876_543_210), input: input,
            digests: ["counters": 0, "main": .max, "z\"q": 0x00ab_0000_0000_00cd],
            annotation: ["key": "k-1", "digest": "abc", "n": [1, 2]], sequence: 99,
            revisions: ["main": 4, "counters": 0, "z\"q": -1])
        #expect(full.jsonBytes == full.json.jsonBytes, "\(full.json.jsonString)")
        #expect(try InputRecord(json: JSONValue(parsing: full.jsonBytes)) == full)
        let onePage = InputRecord(
            number: 2, time: .milliseconds(1), input: input, digests: ["counters": 0x8292_a3f8_3731_23ee],
            sequence: 1_001, revisions: ["counters": 1_000])
        #expect(onePage.jsonBytes == onePage.json.jsonBytes, "\(onePage.json.jsonString)")
    }
}
