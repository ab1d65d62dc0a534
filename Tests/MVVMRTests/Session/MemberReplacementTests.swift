import JSONPatch
import Testing

@testable import MVVMR

/// The page document's shortcut for an object whose scalar members changed (a row whose count changed): the same
/// operations as the general differ, for any such pair, and no shortcut for any other.
@Suite struct MemberReplacementTests {
    private static func scalar(_ generator: inout some RandomNumberGenerator) -> JSONValue {
        switch Int.random(in: 0..<6, using: &generator) {
        case 0: .null
        case 1: .bool(Bool.random(using: &generator))
        case 2: .int(Int.random(in: -3...3, using: &generator))
        case 3: .double(Double(Int.random(in: -3...3, using: &generator)) / 2)
        case 4: .string(["", "a", "b", "~1/x"].randomElement(using: &generator) ?? "")
        default: .int(1)
        }
    }

    @Test func theShortcutGivesTheGeneralDiffersOperations() {
        var generator = SystemRandomNumberGenerator()
        let path = JSONPointer(tokens: ["rows", "3"])
        var shortcuts = 0
        for _ in 0..<2_000 {
            let keys = ["id", "title", "count", "a/b", "~"].shuffled(using: &generator).prefix(Int.random(in: 1...5, using: &generator))
            let old = JSONObject(keys.map { ($0, Self.scalar(&generator)) })
            var new = old
            for key in keys where Bool.random(using: &generator) { new[key] = Self.scalar(&generator) }
            guard let replacements = PageDocument.memberReplacements(from: old, to: new, at: path) else {
                Issue.record("no shortcut for \(old) → \(new)")
                continue
            }
            shortcuts += 1
            let general = JSONPatch.diff(from: .object(old), to: .object(new), at: path).operations
            #expect(replacements == general, "\(old) → \(new)")
            // And the operations take the old document to the new one.
            let document: JSONValue = ["rows": [0, 1, 2, .object(old)]]
            #expect((try? JSONPatch(replacements).apply(to: document)) == ["rows": [0, 1, 2, .object(new)]])
        }
        #expect(shortcuts == 2_000)
    }

    @Test func otherPairsAreLeftToTheGeneralDiffer() {
        let path = JSONPointer.root
        // A member added, removed or renamed; the same keys in another order; a member that is or becomes a
        // container; empty objects.
        let pairs: [(JSONObject, JSONObject)] = [
            (["a": 1], ["a": 1, "b": 2]),
            (["a": 1, "b": 2], ["a": 1]),
            (["a": 1], ["b": 1]),
            (JSONObject([("a", 1), ("b", 2)]), JSONObject([("b", 2), ("a", 1)])),
            (["a": 1], ["a": [1]]),
            (["a": ["x": 1]], ["a": ["x": 2]]),
            ([:], [:]),
        ]
        for (old, new) in pairs {
            #expect(PageDocument.memberReplacements(from: old, to: new, at: path) == nil, "\(old) → \(new)")
        }
        // A container member left unchanged does not stop the shortcut.
        #expect(
            PageDocument.memberReplacements(from: ["a": [1], "b": 1], to: ["a": [1], "b": 2], at: path)
                == [.replace(path: JSONPointer(tokens: ["b"]), value: 2)])
    }
}

/// A turn's patch from the values its writes replaced (no copy of the document kept): whatever a turn writes, in
/// whatever order (the same path again, below an earlier write, above one), its patch takes the document as the
/// turn found it to the document as the turn left it, and a later write into a value a turn replaced leaves that
/// turn's patch as it was.
@Suite struct PageDocumentTurnTests {
    private static func value(_ generator: inout some RandomNumberGenerator, depth: Int = 0) -> JSONValue {
        switch Int.random(in: 0..<(depth > 2 ? 3 : 6), using: &generator) {
        case 0: .int(Int.random(in: 0...3, using: &generator))
        case 1: .string(["a", "b"].randomElement(using: &generator) ?? "a")
        case 2: .null
        case 3, 4:
            .object(JSONObject(["x", "y", "z"].prefix(Int.random(in: 0...3, using: &generator)).map { ($0, value(&generator, depth: depth + 1)) }))
        default:
            .array((0..<Int.random(in: 0...3, using: &generator)).map { _ in value(&generator, depth: depth + 1) })
        }
    }

    /// A path into `document` (existing, one step past it, or through nothing), as a page's writes would name one.
    private static func path(in document: JSONValue, _ generator: inout some RandomNumberGenerator) -> JSONPointer {
        var tokens: [String] = []
        var node: JSONValue? = document
        for _ in 0..<Int.random(in: 0...3, using: &generator) {
            switch node {
            case .object(let object)?:
                let key = (object.keys + ["x", "new"]).randomElement(using: &generator) ?? "x"
                tokens.append(key)
                node = object[key]
            case .array(let array)?:
                let index = Int.random(in: 0...array.count, using: &generator)
                tokens.append(String(index))
                node = index < array.count ? array[index] : nil
            default:
                tokens.append("x")
                node = nil
            }
        }
        return JSONPointer(tokens: tokens)
    }

    @Test func aTurnsPatchTakesTheDocumentFromWhereTheTurnFoundItToWhereItLeftIt() throws {
        var generator = SystemRandomNumberGenerator()
        var patches = 0
        for _ in 0..<3_000 {
            let turn = SessionTurn()
            let document = PageDocument(unit: "u", revision: 0, historyLimit: 4, turn: turn)
            document.write(Self.value(&generator), at: JSONPointer(tokens: ["a"]))
            document.write(Self.value(&generator), at: JSONPointer(tokens: ["b"]))
            document.startRecording()
            for _ in 0..<3 {
                let before = document.view
                for _ in 0..<Int.random(in: 1...5, using: &generator) {
                    document.write(Self.value(&generator), at: Self.path(in: document.view, &generator))
                }
                let after = document.view
                let patch = document.commit()
                if let patch {
                    patches += 1
                    #expect(try patch.apply(to: before) == after, "\(before) → \(after): \(patch)")
                } else {
                    #expect(before == after)
                }
                #expect(document.view == after)
            }
        }
        #expect(patches > 1_000)
    }

    @Test func aWriteAboveAnEarlierOneInTheSameTurnIsDiffedFromWhereTheTurnBegan() throws {
        let turn = SessionTurn()
        let document = PageDocument(unit: "u", revision: 0, historyLimit: 4, turn: turn)
        document.write(["rows": [["id": 1, "count": 0], ["id": 2, "count": 0]]], at: .root)
        document.startRecording()
        document.write(1, at: JSONPointer(tokens: ["rows", "0", "count"]))
        document.write([["id": 2, "count": 5]], at: JSONPointer(tokens: ["rows"]))
        let patch = try #require(document.commit())
        #expect(patch.operations == [.remove(path: JSONPointer(tokens: ["rows", "0"])), .replace(path: JSONPointer(tokens: ["rows", "0", "count"]), value: 5)])
        // The same path twice and a path below it: one operation, from the value the turn found.
        document.write(7, at: JSONPointer(tokens: ["rows", "0", "count"]))
        document.write(["id": 2, "count": 9], at: JSONPointer(tokens: ["rows", "0"]))
        document.write(8, at: JSONPointer(tokens: ["rows", "0", "count"]))
        let second = try #require(document.commit())
        #expect(second.operations == [.replace(path: JSONPointer(tokens: ["rows", "0", "count"]), value: 8)])
        #expect(document.revision == 2)
    }
}
