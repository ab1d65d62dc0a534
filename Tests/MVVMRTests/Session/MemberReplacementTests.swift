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
