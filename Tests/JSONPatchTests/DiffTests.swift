import JSONPatch
import Testing

@Suite("Diff: exact patches")
struct DiffTests {
    private func patchText(_ old: JSONValue, _ new: JSONValue, at base: JSONPointer = .root, options: DiffOptions = .init()) throws -> String {
        let patch = JSONPatch.diff(from: old, to: new, at: base, options: options)
        if base.isRoot {
            #expect(try patch.apply(to: old) == new)
        }
        return patch.json.jsonString
    }

    @Test func equalDocumentsGiveAnEmptyPatch() throws {
        #expect(try patchText(["a": [1, ["b": 2]]], ["a": [1, ["b": 2]]]) == "[]")
        #expect(try patchText(["a": 1, "b": 2], ["b": 2, "a": 1]) == "[]")
        #expect(try patchText(1, 1.0) == "[]")
    }

    @Test func changedScalarIsOneReplace() throws {
        #expect(try patchText(["a": ["b": 1, "c": 2]], ["a": ["b": 5, "c": 2]]) == #"[{"op":"replace","path":"/a/b","value":5}]"#)
        #expect(try patchText(1, "x") == #"[{"op":"replace","path":"","value":"x"}]"#)
        #expect(try patchText(["a": [1]], ["a": ["k": 1]]) == #"[{"op":"replace","path":"/a","value":{"k":1}}]"#)
    }

    @Test func objectsDiffByKey() throws {
        #expect(try patchText(["a": 1, "b": 2], ["b": 2, "c": 3]) == #"[{"op":"remove","path":"/a"},{"op":"add","path":"/c","value":3}]"#)
        #expect(try patchText(["a/b": 1, "m~n": 2], ["a/b": 3]) == #"[{"op":"remove","path":"/m~0n"},{"op":"replace","path":"/a~1b","value":3}]"#)
    }

    @Test func baseIsPrefixedToEveryPath() throws {
        let base = try JSONPointer("/page/list")
        let text = try patchText([1, 2], [1, 3, 4], at: base)
        #expect(text == #"[{"op":"replace","path":"/page/list/1","value":3},{"op":"add","path":"/page/list/2","value":4}]"#)
        let document: JSONValue = ["page": ["list": [1, 2]]]
        let patch = JSONPatch.diff(from: [1, 2], to: [1, 3, 4], at: base)
        #expect(try patch.apply(to: document) == ["page": ["list": [1, 3, 4]]])
        #expect(try patchText(1, 2, at: base) == #"[{"op":"replace","path":"/page/list","value":2}]"#)
    }

    @Test func sequenceDiffTouchesOnlyTheMiddle() throws {
        let old: JSONValue = .array((0..<100).map { .int($0) })
        var middleChanged = (0..<100).map { JSONValue.int($0) }
        middleChanged[50] = "x"
        #expect(try patchText(old, .array(middleChanged)) == #"[{"op":"replace","path":"/50","value":"x"}]"#)
        var inserted = (0..<100).map { JSONValue.int($0) }
        inserted.insert("new", at: 40)
        #expect(try patchText(old, .array(inserted)) == #"[{"op":"add","path":"/40","value":"new"}]"#)
        var removed = (0..<100).map { JSONValue.int($0) }
        removed.remove(at: 70)
        #expect(try patchText(old, .array(removed)) == #"[{"op":"remove","path":"/70"}]"#)
        #expect(try patchText([1, 2, 3, 4, 5], [1, 9, 3, 5, 6]) == #"[{"op":"replace","path":"/1","value":9},{"op":"remove","path":"/3"},{"op":"add","path":"/4","value":6}]"#)
    }

    @Test func duplicatesAndUnkeyedObjectsUseTheSequenceDiff() throws {
        #expect(try patchText([1, 1, 1], [1, 1]) == #"[{"op":"remove","path":"/2"}]"#)
        // Missing ids: rows pair up by position and get inner operations.
        let old: JSONValue = [["name": "a", "v": 1], ["name": "b", "v": 2]]
        let new: JSONValue = [["name": "a", "v": 1], ["name": "b", "v": 3]]
        #expect(try patchText(old, new) == #"[{"op":"replace","path":"/1/v","value":3}]"#)
        // Repeated ids fall back too, and the result is still correct.
        let repeated: JSONValue = [["id": 1, "v": 1], ["id": 1, "v": 2], ["id": 2, "v": 3]]
        let repeatedNew: JSONValue = [["id": 2, "v": 3], ["id": 1, "v": 1]]
        _ = try patchText(repeated, repeatedNew)
    }

    @Test func keyedChangeInOneRowOfTenThousandIsOneOperation() throws {
        let old = makeRowsDocument(count: 10_000)
        let new = withRows(old) { rows in rows[6_543] = ["id": 6_543, "title": "Changed", "count": 1, "tags": ["t3", "u0"]] }
        #expect(try patchText(old, new) == #"[{"op":"replace","path":"/rows/6543/title","value":"Changed"},{"op":"replace","path":"/rows/6543/count","value":1}]"#)
        let single = withRows(old) { rows in rows[4_000] = ["id": 4_000, "title": "New title", "count": .int(4_000 * 7 % 13), "tags": ["t0", "u1"]] }
        #expect(try patchText(old, single) == #"[{"op":"replace","path":"/rows/4000/title","value":"New title"}]"#)
    }

    @Test func keyedInsertionIsOneAdd() throws {
        let old = makeRowsDocument(count: 10_000)
        let row: JSONValue = ["id": 99_999, "title": "Inserted"]
        let new = withRows(old) { rows in rows.insert(row, at: 5_000) }
        #expect(try patchText(old, new) == #"[{"op":"add","path":"/rows/5000","value":{"id":99999,"title":"Inserted"}}]"#)
    }

    @Test func keyedReorderOfOneRowIsOneMove() throws {
        let old = makeRowsDocument(count: 10_000)
        let later = withRows(old) { rows in rows.insert(rows.remove(at: 10), at: 9_000) }
        #expect(try patchText(old, later) == #"[{"op":"move","from":"/rows/10","path":"/rows/9000"}]"#)
        let earlier = withRows(old) { rows in rows.insert(rows.remove(at: 9_000), at: 10) }
        #expect(try patchText(old, earlier) == #"[{"op":"move","from":"/rows/9000","path":"/rows/10"}]"#)
        let first = withRows(old) { rows in rows.insert(rows.removeLast(), at: 0) }
        #expect(try patchText(old, first) == #"[{"op":"move","from":"/rows/9999","path":"/rows/0"}]"#)
    }

    @Test func keyedRemovalAndMoveWithInnerChange() throws {
        let old: JSONValue = [["id": "a"], ["id": "b", "v": 1], ["id": "c"], ["id": "d"]]
        let new: JSONValue = [["id": "b", "v": 2], ["id": "a"], ["id": "d"]]
        #expect(try patchText(old, new) == #"[{"op":"remove","path":"/2"},{"op":"move","from":"/0","path":"/1"},{"op":"replace","path":"/0/v","value":2}]"#)
    }

    @Test func identityKeyCanBeChosenPerArray() throws {
        let old: JSONValue = ["users": [["key": "x", "n": 1], ["key": "y", "n": 2], ["key": "z", "n": 3]]]
        let new: JSONValue = ["users": [["key": "y", "n": 2], ["key": "z", "n": 3], ["key": "x", "n": 1]]]
        var options = DiffOptions()
        options.identityKeys[try JSONPointer("/users")] = "key"
        #expect(try patchText(old, new, options: options) == #"[{"op":"move","from":"/users/0","path":"/users/2"}]"#)
        var global = DiffOptions()
        global.identityKey = "key"
        #expect(try patchText(old, new, options: global) == #"[{"op":"move","from":"/users/0","path":"/users/2"}]"#)
        // Without the identity the sequence diff still produces a correct (different) patch.
        #expect(try patchText(old, new) != #"[{"op":"move","from":"/users/0","path":"/users/2"}]"#)
    }

    @Test func overTheCostCapTheArrayIsReplaced() throws {
        var options = DiffOptions()
        options.maxSequenceCost = 4
        let old: JSONValue = .array((0..<20).map { .int($0) })
        let new: JSONValue = .array((0..<20).map { .int(100 + $0) })
        #expect(try patchText(old, new, options: options) == #"[{"op":"replace","path":"","value":\#(new.jsonString)}]"#)
        // Under the cap the same change is element-wise.
        #expect(JSONPatch.diff(from: old, to: new).count == 20)
    }

    @Test func equalLargeDocumentsDiffQuickly() {
        let old = makeRowsDocument(count: 10_000)
        let new = makeRowsDocument(count: 10_000)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            #expect(JSONPatch.diff(from: old, to: new).isEmpty)
        }
        // Debug build; the release benchmark measures the real number.
        #expect(elapsed < .seconds(2))
    }

    @Test func longestIncreasingSubsequenceKeepsMostRowsStill() throws {
        // Reversal: everything but one row has to move; the patch must still be correct.
        let old: JSONValue = .array((0..<50).map { ["id": .int($0)] })
        let new: JSONValue = .array((0..<50).reversed().map { ["id": .int($0)] })
        let patch = JSONPatch.diff(from: old, to: new)
        #expect(patch.count == 49)
        #expect(try patch.apply(to: old) == new)
    }
}

@Suite("Diff: object heuristics")
struct DiffObjectHeuristicTests {
    @Test func objectsWithNoCommonKeyAreReplacedWhole() throws {
        let old: JSONValue = ["list": [["a": 1, "b": 2]]]
        let new: JSONValue = ["list": [["c": 3]]]
        let patch = JSONPatch.diff(from: old, to: new)
        #expect(patch.json.jsonString == #"[{"op":"replace","path":"/list/0","value":{"c":3}}]"#)
        #expect(try patch.apply(to: old) == new)
        // An empty object gains members one by one.
        #expect(JSONPatch.diff(from: ["o": .object([:])], to: ["o": ["k": 1]]).json.jsonString == #"[{"op":"add","path":"/o/k","value":1}]"#)
    }

    @Test func hugeCostCapDoesNotOverflow() throws {
        var options = DiffOptions()
        options.maxSequenceCost = .max
        let old: JSONValue = [["id": 1], ["id": 2], ["id": 3]]
        let new: JSONValue = [["id": 3], ["id": 1], ["id": 2]]
        #expect(try JSONPatch.diff(from: old, to: new, options: options).apply(to: old) == new)
        options.maxSequenceCost = -5
        #expect(try JSONPatch.diff(from: [1, 2], to: [2, 1], options: options).apply(to: [1, 2]) == [2, 1])
    }
}

@Suite("Diff: identity fallbacks")
struct DiffIdentityFallbackTests {
    @Test func repeatedOldIdentitiesFallBackToTheSequenceDiff() throws {
        let old: JSONValue = [["id": 1, "v": 1], ["id": 1, "v": 2], ["id": 2, "v": 3]]
        let new: JSONValue = [["id": 1, "v": 9], ["id": 2, "v": 3]]
        let patch = JSONPatch.diff(from: old, to: new)
        #expect(try patch.apply(to: old) == new)
        #expect(patch.count <= 2)
    }

    @Test func rowsMissingTheIdentityFallBackToTheSequenceDiff() throws {
        let old: JSONValue = [["id": 1], ["name": "x"], ["id": 2]]
        let new: JSONValue = [["id": 1], ["name": "y"], ["id": 2]]
        #expect(JSONPatch.diff(from: old, to: new).json.jsonString == #"[{"op":"replace","path":"/1/name","value":"y"}]"#)
    }

    @Test func removedRowsWithRepeatedIdentitiesAreJustRemoved() throws {
        let old: JSONValue = [["id": 7], ["id": 7], ["id": 1], ["id": 2]]
        let new: JSONValue = [["id": 2], ["id": 1]]
        let patch = JSONPatch.diff(from: old, to: new)
        #expect(try patch.apply(to: old) == new)
        #expect(patch.json.jsonString == #"[{"op":"remove","path":"/1"},{"op":"remove","path":"/0"},{"op":"move","from":"/0","path":"/1"}]"#)
    }
}

@Suite("Diff: whole arrays")
struct DiffWholeArrayTests {
    @Test func clearingOrFillingAnArrayIsOneReplace() throws {
        let rows: JSONValue = .array((0..<100).map { ["id": .int($0)] })
        #expect(JSONPatch.diff(from: ["rows": rows], to: ["rows": []]).json.jsonString == #"[{"op":"replace","path":"/rows","value":[]}]"#)
        let filled = JSONPatch.diff(from: ["rows": []], to: ["rows": rows])
        #expect(filled.count == 1)
        #expect(try filled.apply(to: ["rows": []]) == ["rows": rows])
        #expect(JSONPatch.diff(from: [], to: [1]).json.jsonString == #"[{"op":"add","path":"/0","value":1}]"#)
        #expect(JSONPatch.diff(from: [1], to: []).json.jsonString == #"[{"op":"remove","path":"/0"}]"#)
    }
}

@Suite("Diff: shared storage")
struct DiffSharedStorageTests {
    /// The page layer derives the next view-model from the previous one by mutation, so
    /// unchanged rows share storage; the diff must still find the one changed row.
    @Test func derivedDocumentsDiffToTheChangedRowOnly() throws {
        let old = makeRowsDocument(count: 2_000)
        var new = old
        new = withRows(new) { rows in
            rows[1_500] = ["id": 1_500, "title": "Edited", "count": .int(1_500 * 7 % 13), "tags": ["t0", "u0"]]
        }
        let patch = JSONPatch.diff(from: old, to: new)
        #expect(patch.json.jsonString == #"[{"op":"replace","path":"/rows/1500/title","value":"Edited"}]"#)
        #expect(try patch.apply(to: old) == new)
    }
}
