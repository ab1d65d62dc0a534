import Foundation
import JSONPatch
import Testing

@Suite("Encoding")
struct JSONEncoderTests {
    @Test func encodesCompactly() {
        let value: JSONValue = ["a": [1, 2.5, "x", true, nil], "b": .object([:]), "c": []]
        #expect(value.jsonString == #"{"a":[1,2.5,"x",true,null],"b":{},"c":[]}"#)
        #expect(value.jsonBytes == Array(value.jsonString.utf8))
        #expect(value.description == value.jsonString)
        var buffer = Array("prefix:".utf8)
        value.encode(into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == "prefix:" + value.jsonString)
    }

    @Test(arguments: [
        ("plain", #""plain""#),
        ("quote\"backslash\\", #""quote\"backslash\\""#),
        ("\n\r\t\u{08}\u{0C}", #""\n\r\t\b\f""#),
        ("\u{00}\u{1F}\u{7F}", "\"\\u0000\\u001f\u{7F}\""),
        ("slash/é😀", "\"slash/é😀\""),
    ])
    func escapesWhatItMust(text: String, expected: String) throws {
        let encoded = JSONValue.string(text).jsonString
        #expect(encoded == expected)
        #expect(try JSONValue(parsing: encoded) == .string(text))
    }

    @Test func nonFiniteDoublesEncodeAsNull() {
        #expect(JSONValue.double(.infinity).jsonString == "null")
        #expect(JSONValue.double(-.infinity).jsonString == "null")
        #expect(JSONValue.double(.nan).jsonString == "null")
    }

    @Test func doublesRoundTripExactly() throws {
        var generator = SeededGenerator(seed: 11)
        let specials: [Double] = [0.1, 1.0 / 3.0, Double.leastNormalMagnitude / 3, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -0.0, 1e16, 123456789.125, 2.0]
        for value in specials {
            let text = JSONValue.double(value).jsonString
            let parsed = try JSONValue(parsing: text)
            guard case .double(let back) = parsed else {
                Issue.record("\(value) encoded as \(text), which parsed as \(parsed)")
                continue
            }
            #expect(back.bitPattern == value.bitPattern)
        }
        for _ in 0..<5000 {
            let value = Double(bitPattern: generator.next())
            guard value.isFinite else { continue }
            let parsed = try JSONValue(parsing: JSONValue.double(value).jsonString)
            guard case .double(let back) = parsed else {
                Issue.record("\(value) did not parse back as a double")
                continue
            }
            #expect(back.bitPattern == value.bitPattern)
        }
    }

    @Test func encodingAgreesWithFoundation() throws {
        // Foundation's parser is an independent check that our output is valid JSON.
        let value: JSONValue = ["s": "a\"\\\n\u{01}é😀", "n": [1, -2, 3.25, 1e300], "o": ["k": nil, "t": true]]
        let object = try JSONSerialization.jsonObject(with: Data(value.jsonBytes))
        let dictionary = try #require(object as? [String: Any])
        #expect(dictionary["s"] as? String == "a\"\\\n\u{01}é😀")
        let numbers = try #require(dictionary["n"] as? [Double])
        #expect(numbers == [1, -2, 3.25, 1e300])
    }
}
