import JSONPatch
import Testing

/// Random document pairs from a seeded generator: apply(diff(a, b), a) must equal b.
@Suite("Diff: properties")
struct DiffPropertyTests {
    /// Keys include characters that need `~0` / `~1` escaping in pointers.
    static let keys = ["a", "b", "id", "~", "/", "a/b", "m~n", "~1", "", "x y"]

    struct Generator {
        var random: SeededGenerator

        mutating func chance(_ percent: Int) -> Bool {
            Int.random(in: 0..<100, using: &random) < percent
        }

        mutating func scalar() -> JSONValue {
            switch Int.random(in: 0..<7, using: &random) {
            case 0: return .null
            case 1: return .bool(chance(50))
            case 2: return .int(Int.random(in: -3...3, using: &random))
            case 3: return .double([0.5, 1.0, -2.25, 1e20][Int.random(in: 0..<4, using: &random)])
            case 4: return .string(["", "x", "y", "~", "/"][Int.random(in: 0..<5, using: &random)])
            case 5: return .int(Int.random(in: 0..<3, using: &random))  // many duplicates
            default: return .string("s\(Int.random(in: 0..<3, using: &random))")
            }
        }

        mutating func value(depth: Int) -> JSONValue {
            guard depth > 0, chance(60) else { return scalar() }
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return object(depth: depth)
            case 1: return keyedArray(depth: depth)
            default:
                let count = Int.random(in: 0..<6, using: &random)
                return .array((0..<count).map { _ in value(depth: depth - 1) })
            }
        }

        mutating func object(depth: Int) -> JSONValue {
            var object = JSONObject()
            for _ in 0..<Int.random(in: 0..<5, using: &random) {
                object[DiffPropertyTests.keys.randomElement(using: &random) ?? "a"] = value(depth: depth - 1)
            }
            return .object(object)
        }

        mutating func keyedArray(depth: Int) -> JSONValue {
            var ids = Array(0..<12).shuffled(using: &random)
            ids = Array(ids.prefix(Int.random(in: 0..<8, using: &random)))
            return .array(ids.map { id in
                var row: JSONObject = ["id": .int(id)]
                if chance(70) { row["v"] = value(depth: depth - 1) }
                if chance(30) { row["w"] = scalar() }
                return .object(row)
            })
        }

        /// A variation of `value`: edits, insertions, removals, reorders and type changes.
        mutating func mutate(_ value: JSONValue, depth: Int) -> JSONValue {
            if chance(10) { return self.value(depth: depth) }  // type change / total rewrite
            switch value {
            case .object(var object):
                for key in object.keys where chance(40) {
                    if chance(25) {
                        object[key] = nil
                    } else if let member = object[key] {
                        object[key] = mutate(member, depth: depth - 1)
                    }
                }
                if chance(30) { object[DiffPropertyTests.keys.randomElement(using: &random) ?? "b"] = self.value(depth: depth - 1) }
                return .object(object)
            case .array(var array):
                for index in array.indices.reversed() where chance(25) {
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: array.remove(at: index)
                    case 1: array[index] = mutate(array[index], depth: depth - 1)
                    case 2: array.insert(array[index], at: Int.random(in: 0...array.count, using: &random))  // duplicate
                    default:
                        let element = array.remove(at: index)
                        array.insert(element, at: Int.random(in: 0...array.count, using: &random))
                    }
                }
                if chance(30) {
                    let fresh: JSONValue = chance(50)
                        ? ["id": .int(Int.random(in: 0..<20, using: &random)), "v": scalar()]
                        : self.value(depth: depth - 1)
                    array.insert(fresh, at: Int.random(in: 0...array.count, using: &random))
                }
                return .array(array)
            default:
                return chance(50) ? scalar() : value
            }
        }
    }

    @Test(arguments: [1, 2, 3, 4])
    func applyingTheDiffOfRelatedDocumentsGivesTheTarget(seed: UInt64) throws {
        var generator = Generator(random: SeededGenerator(seed: seed))
        for iteration in 0..<1500 {
            let old = generator.value(depth: 4)
            let new = generator.mutate(old, depth: 4)
            let patch = JSONPatch.diff(from: old, to: new)
            let result = try patch.apply(to: old)
            #expect(result == new, "seed \(seed) iteration \(iteration): \(old) -> \(new) via \(patch)")
            if old == new { #expect(patch.isEmpty) }
            // The JSON form survives encoding, as it does on the wire.
            let wire = try JSONPatch(json: JSONValue(parsing: patch.json.jsonBytes))
            #expect(wire == patch)
            // The direct encoder writes the very bytes of the JSON form (the server sends those).
            #expect(patch.jsonBytes == patch.json.jsonBytes, "seed \(seed) iteration \(iteration): \(patch)")
            // Written into room of its encodedCapacity, it is the same text, and fits.
            let bounded = BoundedBytes.make(capacity: patch.encodedCapacity) { $0.putPatch(patch) }
            #expect(bounded == patch.jsonBytes, "seed \(seed) iteration \(iteration): \(patch)")
            #expect(bounded.count <= patch.encodedCapacity)
            // In place and then made to fail at the end, it rolls back to the very text it started from.
            var document = old
            let failing = JSONPatch(patch.operations + [.remove(path: JSONPointer(tokens: ["no such member", "x"]))])
            #expect(throws: JSONPatchError.self) { try failing.apply(toDocument: &document) }
            #expect(document.jsonString == old.jsonString, "seed \(seed) iteration \(iteration): rolled back \(patch)")
        }
    }

    @Test(arguments: [10, 20])
    func applyingTheDiffOfUnrelatedDocumentsGivesTheTarget(seed: UInt64) throws {
        var generator = Generator(random: SeededGenerator(seed: seed))
        for iteration in 0..<1000 {
            let old = generator.value(depth: 3)
            let new = generator.value(depth: 3)
            let result = try JSONPatch.diff(from: old, to: new).apply(to: old)
            #expect(result == new, "seed \(seed) iteration \(iteration): \(old) -> \(new)")
        }
    }

    @Test func diffsWithABaseApplyToTheEnclosingDocument() throws {
        var generator = Generator(random: SeededGenerator(seed: 99))
        let base = try JSONPointer("/outer/~0/1")
        for _ in 0..<500 {
            let old = generator.value(depth: 3)
            let new = generator.mutate(old, depth: 3)
            let wrap = { (inner: JSONValue) -> JSONValue in ["outer": ["~": [0, inner]], "other": 1] }
            let patch = JSONPatch.diff(from: old, to: new, at: base)
            #expect(try patch.apply(to: wrap(old)) == wrap(new))
        }
    }

    @Test func randomReordersOfKeyedRowsUseFewOperations() throws {
        var random = SeededGenerator(seed: 5)
        for _ in 0..<200 {
            let count = Int.random(in: 1..<60, using: &random)
            let old: JSONValue = .array((0..<count).map { ["id": .int($0), "v": .int($0)] })
            var rows = (0..<count).map { JSONValue(dictionaryLiteral: ("id", .int($0)), ("v", .int($0))) }
            let moves = Int.random(in: 0..<4, using: &random)
            for _ in 0..<moves {
                let row = rows.remove(at: Int.random(in: 0..<rows.count, using: &random))
                rows.insert(row, at: Int.random(in: 0...rows.count, using: &random))
            }
            let new = JSONValue.array(rows)
            let patch = JSONPatch.diff(from: old, to: new)
            #expect(patch.count <= moves)
            #expect(patch.allSatisfy { if case .move = $0 { true } else { false } })
            #expect(try patch.apply(to: old) == new)
        }
    }
}
