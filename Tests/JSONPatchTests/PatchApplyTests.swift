import JSONPatch
import Testing

@Suite("Applying patches")
struct PatchApplyTests {
    static let document: JSONValue = ["a": ["b": [1, 2, 3]], "c": "x"]

    private func apply(_ patchText: String, to document: JSONValue = PatchApplyTests.document) throws -> JSONValue {
        try JSONPatch(json: JSONValue(parsing: patchText)).apply(to: document)
    }

    private func expectFailure(_ patchText: String, code: JSONPatchError.Code, operationIndex: Int? = 0, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation) { try apply(patchText) } throws: { error in
            guard let error = error as? JSONPatchError else { return false }
            return error.code == code && error.operationIndex == operationIndex
        }
    }

    @Test func eachOperationWorks() throws {
        #expect(try apply(#"[{"op":"add","path":"/a/b/1","value":9}]"#) == ["a": ["b": [1, 9, 2, 3]], "c": "x"])
        #expect(try apply(#"[{"op":"add","path":"/a/b/-","value":9}]"#) == ["a": ["b": [1, 2, 3, 9]], "c": "x"])
        #expect(try apply(#"[{"op":"add","path":"/d","value":{"e":null}}]"#) == ["a": ["b": [1, 2, 3]], "c": "x", "d": ["e": nil]])
        #expect(try apply(#"[{"op":"remove","path":"/a/b/0"}]"#) == ["a": ["b": [2, 3]], "c": "x"])
        #expect(try apply(#"[{"op":"replace","path":"/c","value":[1]}]"#) == ["a": ["b": [1, 2, 3]], "c": [1]])
        #expect(try apply(#"[{"op":"move","from":"/a/b/0","path":"/a/b/2"}]"#) == ["a": ["b": [2, 3, 1]], "c": "x"])
        #expect(try apply(#"[{"op":"move","from":"/c","path":"/a/c"}]"#) == ["a": ["b": [1, 2, 3], "c": "x"]])
        #expect(try apply(#"[{"op":"copy","from":"/a/b","path":"/c"}]"#) == ["a": ["b": [1, 2, 3]], "c": [1, 2, 3]])
        #expect(try apply(#"[{"op":"test","path":"/a/b","value":[1,2,3]}]"#) == Self.document)
        #expect(try apply(#"[{"op":"replace","path":"","value":5}]"#) == 5)
    }

    @Test func addOnExistingKeyReplacesInPlace() throws {
        let result = try apply(#"[{"op":"add","path":"/a","value":0}]"#)
        #expect(result.objectValue?.keys == ["a", "c"])
        #expect(result["a"] == 0)
    }

    @Test func failuresHaveStableCodesAndTheOperationIndex() {
        expectFailure(#"[{"op":"add","path":"/a/b/4","value":1}]"#, code: .invalidArrayIndex)
        expectFailure(#"[{"op":"add","path":"/a/b/01","value":1}]"#, code: .invalidArrayIndex)
        expectFailure(#"[{"op":"remove","path":"/a/b/-"}]"#, code: .invalidArrayIndex)
        expectFailure(#"[{"op":"remove","path":"/a/b/3"}]"#, code: .pathNotFound)
        expectFailure(#"[{"op":"remove","path":"/zz"}]"#, code: .pathNotFound)
        expectFailure(#"[{"op":"add","path":"/zz/y","value":1}]"#, code: .pathNotFound)
        expectFailure(#"[{"op":"add","path":"/c/y","value":1}]"#, code: .pathNotFound)
        expectFailure(#"[{"op":"replace","path":"/zz","value":1}]"#, code: .pathNotFound)
        expectFailure(#"[{"op":"test","path":"/c","value":"y"}]"#, code: .testFailed)
        expectFailure(#"[{"op":"test","path":"/c","value":"x"},{"op":"test","path":"/zz","value":1}]"#, code: .pathNotFound, operationIndex: 1)
        expectFailure(#"[{"op":"move","from":"/a","path":"/a/b/0"}]"#, code: .moveIntoDescendant)
        expectFailure(#"[{"op":"move","from":"/zz","path":"/zz"}]"#, code: .pathNotFound)
        expectFailure(#"[{"op":"copy","from":"/zz","path":"/y"}]"#, code: .pathNotFound)
        expectFailure(#"[{"op":"jump","path":"/a"}]"#, code: .invalidOperation)
        expectFailure(#"[{"path":"/a"}]"#, code: .invalidOperation)
        expectFailure(#"[{"op":"add","path":"/a"}]"#, code: .invalidOperation)
        expectFailure(#"[{"op":"add","path":1,"value":1}]"#, code: .invalidOperation)
        expectFailure(#"[{"op":"move","path":"/a"}]"#, code: .invalidOperation)
        expectFailure(#"[{"op":"add","path":"a","value":1}]"#, code: .invalidPointer)
        expectFailure(#"[1]"#, code: .invalidOperation)
        expectFailure(#"{"op":"add"}"#, code: .invalidOperation, operationIndex: nil)
    }

    @Test func moveToItselfIsANoOp() throws {
        #expect(try apply(#"[{"op":"move","from":"/a/b","path":"/a/b"}]"#) == Self.document)
    }

    @Test func failingPatchReturnsNoPartialResult() throws {
        var document = Self.document
        let patch = try JSONPatch(json: JSONValue(parsing: #"[{"op":"replace","path":"/c","value":"changed"},{"op":"remove","path":"/nope"}]"#))
        #expect(throws: JSONPatchError.self) { try patch.apply(toDocument: &document) }
        #expect(document == Self.document)
        #expect(throws: JSONPatchError.self) { try patch.apply(to: document) }
    }

    /// In place, a value inside a large array is changed where it stands: the array is not copied, and a
    /// rolled-back failure does not copy it either.
    @Test func applyingInPlaceDoesNotCopyALargeArray() throws {
        var document: JSONValue = ["rows": .array((0..<1000).map { .int($0) }), "n": 1]
        func rowsBuffer(_ document: JSONValue) -> UInt? {
            guard case .array(let rows)? = document[JSONPointer(tokens: ["rows"])] else { return nil }
            return rows.withUnsafeBufferPointer { $0.baseAddress.map { UInt(bitPattern: $0) } }
        }
        let before = try #require(rowsBuffer(document))
        let replace = PatchOperation.replace(path: JSONPointer(tokens: ["rows", "500"]), value: -1)
        try JSONPatch([replace]).apply(toDocument: &document)
        #expect(rowsBuffer(document) == before)
        #expect(document[JSONPointer(tokens: ["rows", "500"])] == -1)
        #expect(throws: JSONPatchError.self) {
            try JSONPatch([replace, .remove(path: JSONPointer(tokens: ["nope"]))]).apply(toDocument: &document)
        }
        #expect(rowsBuffer(document) == before)
    }

    /// A failing operation rolls back every one before it, in place: the very same text, keys in order.
    @Test func aFailureRollsBackEveryEarlierOperationKeepingKeyOrder() throws {
        let original = try JSONValue(parsing: #"{"a":1,"b":{"c":[1,2,3],"d":"x"},"e":[{"k":1}],"f":null}"#)
        let patch = try JSONPatch(json: JSONValue(parsing: #"""
            [{"op":"remove","path":"/a"},{"op":"add","path":"/b/c/-","value":4},{"op":"move","from":"/b/d","path":"/z"},
             {"op":"replace","path":"/e/0/k","value":2},{"op":"remove","path":"/b/c/0"},{"op":"copy","from":"/e","path":"/b/e"},
             {"op":"add","path":"/f","value":true},{"op":"add","path":"","value":[]},{"op":"add","path":"/0","value":1},
             {"op":"remove","path":"/nope"}]
            """#))
        var document = original
        let error = #expect(throws: JSONPatchError.self) { try patch.apply(toDocument: &document) }
        #expect(error?.operationIndex == 9)
        #expect(document.jsonString == original.jsonString)
    }

    @Test func jsonFormRoundTrips() throws {
        let patch = JSONPatch([
            .add(path: try JSONPointer("/a~1b"), value: [1]),
            .remove(path: .root.appending("x")),
            .replace(path: .root, value: nil),
            .move(from: .root.appending("p"), path: .root.appending("q")),
            .copy(from: .root.appending(0), path: .root.appending("-")),
            .test(path: .root.appending("t"), value: "v"),
        ])
        #expect(try JSONPatch(json: patch.json) == patch)
        #expect(patch.count == 6)
        #expect(patch[0].name == "add")
        #expect(patch.operations[3].path == .root.appending("q"))
        #expect(patch.json.jsonString.hasPrefix(#"[{"op":"add","path":"/a~1b","value":[1]},{"op":"remove","path":"/x"}"#))
        #expect(patch[3].description == #"{"op":"move","from":"/p","path":"/q"}"#)
    }

    @Test func unknownMembersAreIgnored() throws {
        #expect(try apply(#"[{"op":"remove","path":"/c","value":1,"extra":true}]"#) == ["a": ["b": [1, 2, 3]]])
    }
}
