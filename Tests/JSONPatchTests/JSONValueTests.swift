import JSONPatch
import Testing

@Suite("JSONValue and JSONObject")
struct JSONValueTests {
    @Test func literalsBuildTheExpectedCases() {
        let value: JSONValue = ["n": nil, "b": true, "i": 3, "d": 2.5, "s": "x", "a": [1, "two"]]
        #expect(value["n"] == .null)
        #expect(value["b"] == .bool(true))
        #expect(value["i"] == .int(3))
        #expect(value["d"] == .double(2.5))
        #expect(value["s"] == .string("x"))
        #expect(value["a"] == .array([.int(1), .string("two")]))
    }

    @Test func accessorsReturnValuesOfTheirTypeOnly() {
        let value: JSONValue = 4
        #expect(value.intValue == 4)
        #expect(value.doubleValue == 4.0)
        #expect(value.stringValue == nil)
        #expect(JSONValue.double(2.0).intValue == 2)
        #expect(JSONValue.double(2.5).intValue == nil)
        #expect(JSONValue.string("s").stringValue == "s")
        #expect(JSONValue.bool(false).boolValue == false)
        #expect(JSONValue.null.isNull)
        #expect(!JSONValue.int(0).isNull)
        #expect(JSONValue.array([1]).arrayValue == [1])
        #expect(JSONValue.object(["k": 1]).objectValue?["k"] == 1)
        #expect(JSONValue.array([1, 2])[1] == 2)
        #expect(JSONValue.array([1, 2])[2] == nil)
    }

    @Test func objectKeepsInsertionOrder() {
        var object: JSONObject = ["b": 1, "a": 2]
        object["c"] = 3
        object["b"] = 4
        #expect(object.keys == ["b", "a", "c"])
        #expect(JSONValue.object(object).jsonString == #"{"b":4,"a":2,"c":3}"#)
        object["b"] = nil
        #expect(object.keys == ["a", "c"])
        #expect(object.removeValue(forKey: "zzz") == nil)
        #expect(object.count == 2)
        #expect(!object.isEmpty)
        #expect(JSONObject().isEmpty)
    }

    @Test func largeObjectsStayConsistentThroughInsertAndRemove() {
        var object = JSONObject()
        for index in 0..<100 {
            object["k\(index)"] = .int(index)
        }
        for index in stride(from: 0, to: 100, by: 3) {
            object.removeValue(forKey: "k\(index)")
        }
        for index in 0..<100 {
            #expect(object["k\(index)"] == (index % 3 == 0 ? nil : .int(index)))
        }
        #expect(object.keys.first == "k1")
        #expect(Array(object).count == object.count)
    }

    /// `modifyValue` changes a member where it is (small objects searched, large ones indexed), leaves the order and
    /// every other member alone, leaves a copy taken before it unchanged, and neither calls its body nor adds the key
    /// when the key is absent.
    @Test(arguments: [3, 12])
    func modifyValueChangesOneMemberInPlaceOrNothing(memberCount: Int) {
        var object = JSONObject((0..<memberCount).map { ("k\($0)", JSONValue.array([.int($0)])) })
        let before = object
        let result = object.modifyValue(forKey: "k1") { value -> Int in
            if var array = value.takeArray() {
                array.append("added")
                value = .array(array)
            }
            return 7
        }
        #expect(result == 7)
        #expect(object["k1"] == .array([.int(1), "added"]))
        #expect(object.keys == before.keys)
        for index in 0..<memberCount where index != 1 { #expect(object["k\(index)"] == before["k\(index)"]) }
        #expect(before["k1"] == .array([.int(1)]))
        var called = false
        #expect(object.modifyValue(forKey: "absent") { _ in called = true } == nil)
        #expect(!called)
        #expect(object.count == memberCount && object["absent"] == nil)
    }

    @Test func objectEqualityIgnoresKeyOrderAndHashAgrees() {
        let first: JSONObject = ["a": 1, "b": [true, nil]]
        let second: JSONObject = ["b": [true, nil], "a": 1]
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(first != ["a": 1, "b": [true]])
        #expect(first != ["a": 1])
        #expect(JSONObject([("a", 1), ("b", 2)]) != JSONObject([("a", 1), ("c", 2)]))
    }

    @Test func numbersCompareByValue() {
        #expect(JSONValue.int(1) == JSONValue.double(1.0))
        #expect(JSONValue.int(1).hashValue == JSONValue.double(1.0).hashValue)
        #expect(JSONValue.int(1) != JSONValue.double(1.5))
        // 2^53 + 1 has no exact Double; it must not equal the nearest double.
        #expect(JSONValue.int(9_007_199_254_740_993) != JSONValue.double(9_007_199_254_740_992.0))
        #expect(JSONValue.int(1) != JSONValue.string("1"))
        #expect(JSONValue.bool(true) != JSONValue.int(1))
        #expect(JSONValue.null != JSONValue.bool(false))
    }

    @Test func duplicateLiteralKeysKeepFirstPositionAndLastValue() {
        let object = JSONObject([("a", 1), ("b", 2), ("a", 3)])
        #expect(object.keys == ["a", "b"])
        #expect(object["a"] == 3)
        // More pairs than an object searches linearly: built with its index, by the same rule.
        let keys = (0..<12).map { "k\($0)" }
        let large = JSONObject(keys.map { ($0, JSONValue.int(0)) } + [("k3", 7), ("k11", 9)])
        #expect(large.keys == keys)
        #expect(large["k3"] == 7 && large["k11"] == 9 && large["k0"] == 0)
        #expect(large.position(ofKey: "k11") == 11)
    }
}
