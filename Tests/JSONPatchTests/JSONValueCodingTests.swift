import Foundation
import JSONPatch
import Testing

// MARK: - Types under test

private struct Address: Codable, Equatable {
    var street: String
    var zip: String?
}

private struct Person: Codable, Equatable {
    var name: String
    var age: Int
    var height: Double
    var admin: Bool
    var nickname: String?
    var addresses: [Address]
    var scores: [String: Int]
}

private enum Suit: String, Codable, CaseIterable {
    case hearts, spades
}

private enum Priority: Int, Codable {
    case low = 1, high = 9
}

private enum Direction: Codable, Equatable {
    case north, south
}

private indirect enum Shape: Codable, Equatable {
    case point
    case circle(radius: Double)
    case rectangle(Double, Double)
    case labelled(String, size: Int?)
    case nested(Shape?)
}

private struct Payload: Codable, Equatable {
    var id: Int
    var extra: JSONValue
    var fields: JSONObject
}

/// A result encoded by hand the way a service might: `{"ok": …}` or `{"error": {"code": …, "super": …}}`,
/// using a nested container and a super encoder.
private enum Outcome<Success: Codable & Equatable>: Codable, Equatable {
    case success(Success)
    case failure(code: Int, detail: String)

    private enum Keys: String, CodingKey { case ok, error }
    private enum ErrorKeys: String, CodingKey { case code }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        switch self {
        case .success(let value):
            try container.encode(value, forKey: .ok)
        case .failure(let code, let detail):
            var error = container.nestedContainer(keyedBy: ErrorKeys.self, forKey: .error)
            try error.encode(code, forKey: .code)
            var detailContainer = error.superEncoder().singleValueContainer()
            try detailContainer.encode(detail)
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        if container.contains(.ok) {
            self = .success(try container.decode(Success.self, forKey: .ok))
            return
        }
        let error = try container.nestedContainer(keyedBy: ErrorKeys.self, forKey: .error)
        let detail = try error.superDecoder().singleValueContainer().decode(String.self)
        self = .failure(code: try error.decode(Int.self, forKey: .code), detail: detail)
    }
}

/// A class hierarchy whose subclass encodes its superclass through `superEncoder()`.
private class Animal: Codable {
    var legs: Int
    init(legs: Int) { self.legs = legs }
}

private final class Dog: Animal {
    var name: String
    init(name: String, legs: Int) {
        self.name = name
        super.init(legs: legs)
    }

    private enum Keys: String, CodingKey { case name }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(name, forKey: .name)
        try super.encode(to: container.superEncoder())
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        name = try container.decode(String.self, forKey: .name)
        try super.init(from: container.superDecoder())
    }
}

/// Encodes a pair through an unkeyed container with a nested keyed and a nested unkeyed container.
private struct Matrix: Codable, Equatable {
    var label: String
    var rows: [[Int]]

    private enum Keys: String, CodingKey { case label }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        var header = container.nestedContainer(keyedBy: Keys.self)
        try header.encode(label, forKey: .label)
        for row in rows {
            var nested = container.nestedUnkeyedContainer()
            for cell in row { try nested.encode(cell) }
        }
    }

    init(label: String, rows: [[Int]]) {
        self.label = label
        self.rows = rows
    }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        label = try container.nestedContainer(keyedBy: Keys.self).decode(String.self, forKey: .label)
        rows = []
        while !container.isAtEnd {
            var nested = try container.nestedUnkeyedContainer()
            var row: [Int] = []
            while !nested.isAtEnd { row.append(try nested.decode(Int.self)) }
            rows.append(row)
        }
    }
}

private indirect enum Chain: Codable, Equatable {
    case end
    case link(Chain)
}

private struct Empty: Codable, Equatable {}

/// Asks for a keyed container and then an unkeyed one, which the `Encoder` protocol forbids.
private struct MixedContainers: Encodable {
    private enum Keys: String, CodingKey { case a }
    func encode(to encoder: any Encoder) throws {
        var keyed = encoder.container(keyedBy: Keys.self)
        try keyed.encode(1, forKey: .a)
        var unkeyed = encoder.unkeyedContainer()
        try unkeyed.encode(2)
    }
}

/// Gives a single value container two values.
private struct TwoSingleValues: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(1)
        try container.encode(2)
    }
}

private struct Email: Codable, Equatable {
    var address: String
    struct Invalid: Error, CustomStringConvertible {
        var description: String { "not an email address" }
    }
    init(address: String) { self.address = address }
    init(from decoder: any Decoder) throws {
        address = try decoder.singleValueContainer().decode(String.self)
        guard address.contains("@") else { throw Invalid() }
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(address)
    }
}

private struct Range: Decodable {
    var low: Int
    var high: Int
    private enum Keys: String, CodingKey { case low, high }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        low = try container.decode(Int.self, forKey: .low)
        high = try container.decode(Int.self, forKey: .high)
        guard low <= high else {
            throw DecodingError.dataCorruptedError(forKey: .high, in: container, debugDescription: "high is below low")
        }
    }
}

private struct Counter: Codable { var count: UInt8 }
private struct Items: Codable { var items: [Counter] }
private struct Reading: Codable { var value: Double }
private struct Sample: Codable { var value: Float }

/// Writes and reads `userInfo[Measured.unitKey]`.
private struct Measured: Codable {
    static let unitKey = CodingUserInfoKey(rawValue: "unit")
    var unit: String
    init() { unit = "" }
    init(from decoder: any Decoder) throws { unit = Self.unit(in: decoder.userInfo) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Self.unit(in: encoder.userInfo))
    }
    private static func unit(in userInfo: [CodingUserInfoKey: Any]) -> String {
        unitKey.flatMap { userInfo[$0] } as? String ?? "none"
    }
}

// MARK: - Helpers

/// The coding error `body` throws, or `nil` if it succeeds (or throws another type of error).
private func codingError<T>(_ body: () throws -> T) -> JSONValueCodingError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? JSONValueCodingError
    }
}

private func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
    try JSONValueDecoder().decode(T.self, from: JSONValueEncoder().encode(value))
}

private let ada = Person(
    name: "Ada", age: 36, height: 1.65, admin: true, nickname: nil,
    addresses: [Address(street: "1 Main St", zip: "10001"), Address(street: "2 Side St", zip: nil)],
    scores: ["math": 10, "art": 7])

// MARK: - Tests

@Suite("JSONValue coding")
struct JSONValueCodingTests {
    @Test func nestedStructsEncodeInDeclarationOrderAndRoundTrip() throws {
        let value = try JSONValueEncoder().encode(ada)
        #expect(
            value.jsonString
                == #"{"name":"Ada","age":36,"height":1.65,"admin":true,"#
                + #""addresses":[{"street":"1 Main St","zip":"10001"},{"street":"2 Side St"}],"#
                + #""scores":{"art":7,"math":10}}"#)
        #expect(try roundTrip(ada) == ada)
    }

    @Test func sameValueAlwaysGivesTheSameText() throws {
        // Dictionaries and sets built in different orders iterate in different orders; the output must not.
        var forwards: [String: Int] = [:]
        var backwards: [String: Int] = [:]
        let keys = (0..<50).map { "key\($0)" }
        for (index, key) in keys.enumerated() { forwards[key] = index }
        for (index, key) in keys.enumerated().reversed() { backwards[key] = index }
        let setA = Set(keys)
        var setB = Set<String>(minimumCapacity: 200)
        for key in keys.reversed() { setB.insert(key) }
        #expect(try JSONValue(encoding: forwards).jsonString == JSONValue(encoding: backwards).jsonString)
        #expect(try JSONValue(encoding: setA).jsonString == JSONValue(encoding: setB).jsonString)
        #expect(try JSONValue(encoding: ["b": 2, "a": 1, "c": 3]).jsonString == #"{"a":1,"b":2,"c":3}"#)
        #expect(try JSONValue(encoding: Set([3, 1, 2])).jsonString == "[1,2,3]")
        let first = try JSONValue(encoding: ada).jsonBytes
        for _ in 0..<5 { #expect(try JSONValue(encoding: ada).jsonBytes == first) }
        #expect(try roundTrip(setA) == setA)
    }

    @Test func dictionariesWithNonStringKeys() throws {
        let byNumber: [Int: String] = [10: "ten", 2: "two", -1: "minus one"]
        let encoded = try JSONValue(encoding: byNumber)
        #expect(encoded.jsonString == #"{"-1":"minus one","10":"ten","2":"two"}"#)
        #expect(try roundTrip(byNumber) == byNumber)
        // Bool keys are neither strings nor integers: Swift encodes key/value pairs in an array.
        let byFlag: [Bool: Int] = [true: 1, false: 0]
        #expect(try JSONValue(encoding: byFlag).jsonString == "[false,0,true,1]")
        #expect(try roundTrip(byFlag) == byFlag)
        let error = try #require(codingError { try JSONValueDecoder().decode([Int: String].self, from: ["x": "y"]) })
        #expect(error.code == .typeMismatch)
        #expect(error.codingPath == "/x")
    }

    @Test func enumsWithAndWithoutAssociatedValuesRoundTrip() throws {
        #expect(try JSONValue(encoding: Suit.spades) == "spades")
        #expect(try JSONValue(encoding: Priority.high) == 9)
        #expect(try JSONValue(encoding: Direction.south).jsonString == #"{"south":{}}"#)
        #expect(try JSONValue(encoding: Shape.circle(radius: 2)).jsonString == #"{"circle":{"radius":2.0}}"#)
        #expect(try JSONValue(encoding: Shape.rectangle(3, 4)).jsonString == #"{"rectangle":{"_0":3.0,"_1":4.0}}"#)
        let shapes: [Shape] = [
            .point, .circle(radius: 1.5), .rectangle(1, 2), .labelled("x", size: nil), .labelled("y", size: 3),
            .nested(.nested(.point)), .nested(nil),
        ]
        #expect(try roundTrip(shapes) == shapes)
        #expect(try roundTrip(Suit.allCases) == Suit.allCases)
        #expect(try roundTrip(Direction.north) == .north)
        #expect(try JSONValue.string("spades").decoded(as: Suit.self) == .spades)
        let error = try #require(codingError { try JSONValue.string("clubs").decoded(as: Suit.self) })
        #expect(error.code == .dataCorrupted)
        #expect(error.codingPath == "")
    }

    @Test func optionalsAreOmittedWhenNilAndReadBackFromMissingOrNull() throws {
        let address = Address(street: "x", zip: nil)
        #expect(try JSONValue(encoding: address) == ["street": "x"])
        #expect(try JSONValueDecoder().decode(Address.self, from: ["street": "x"]) == address)
        #expect(try JSONValueDecoder().decode(Address.self, from: ["street": "x", "zip": nil]) == address)
        #expect(try JSONValue(encoding: Int?.none) == .null)
        #expect(try JSONValue.null.decoded(as: Int?.self) == nil)
        #expect(try JSONValue.int(4).decoded(as: Int?.self) == 4)
        // A present optional of the wrong type is still an error.
        let error = try #require(
            codingError { try JSONValueDecoder().decode(Address.self, from: ["street": "x", "zip": 5]) })
        #expect(error.code == .typeMismatch)
        #expect(error.codingPath == "/zip")
    }

    @Test func arraysOfOptionalsKeepTheirNulls() throws {
        let values: [Int?] = [1, nil, 3]
        #expect(try JSONValue(encoding: values) == [1, nil, 3])
        #expect(try roundTrip(values) == values)
        let nested: [[String?]?] = [nil, ["a", nil], []]
        #expect(try JSONValue(encoding: nested).jsonString == #"[null,["a",null],[]]"#)
        #expect(try roundTrip(nested) == nested)
    }

    @Test func everyIntegerTypeRoundTripsAtItsBounds() throws {
        func check<Integer: FixedWidthInteger & Codable>(
            _ type: Integer.Type, lower: Integer = Integer.min, upper: Integer = Integer.max
        ) throws {
            for bound in [lower, upper, 0] {
                #expect(try roundTrip(bound) == bound, "\(Integer.self) \(bound)")
                #expect(try roundTrip([bound]) == [bound], "\(Integer.self) \(bound) in an array")
                #expect(try roundTrip(["k": bound]) == ["k": bound], "\(Integer.self) \(bound) in an object")
            }
        }
        try check(Int.self)
        try check(Int8.self)
        try check(Int16.self)
        try check(Int32.self)
        try check(Int64.self)
        try check(UInt8.self)
        try check(UInt16.self)
        try check(UInt32.self)
        // A JSON value holds integers beyond Int.max only as exact doubles.
        try check(UInt.self, upper: 1 << 63)
        try check(UInt64.self, upper: UInt64(1) << 63 | UInt64(1) << 62)
        #expect(try JSONValue(encoding: Int.min) == .int(.min))
        #expect(try JSONValue(encoding: UInt64(Int.max)) == .int(.max))
        #expect(try JSONValue(encoding: UInt64(1) << 63) == .double(9_223_372_036_854_775_808.0))
        try check(Int128.self, lower: Int128(Int.min), upper: Int128(Int.max))
        try check(UInt128.self, upper: UInt128(1) << 63)
    }

    @Test func integersAJSONValueCannotHoldAreRefused() throws {
        for error in [
            codingError { try JSONValueEncoder().encode(["big": UInt64.max]) },
            codingError { try JSONValueEncoder().encode(["big": UInt.max - 1]) },
            codingError { try JSONValueEncoder().encode(["big": Int128.min]) },
        ] {
            let error = try #require(error)
            #expect(error.code == .invalidValue)
            #expect(error.codingPath == "/big")
        }
    }

    @Test func outOfRangeNumbersAreErrorsWithTheirPath() throws {
        let document: JSONValue = ["items": [["count": 1], ["count": 300]]]
        let error = try #require(codingError { try JSONValueDecoder().decode(Items.self, from: document) })
        #expect(error.code == .dataCorrupted)
        #expect(error.codingPath == "/items/1/count")
        #expect(error.message == "number 300 does not fit in UInt8")
        #expect(error.description == "data_corrupted at /items/1/count: number 300 does not fit in UInt8")

        #expect(codingError { try JSONValue.int(-1).decoded(as: UInt.self) }?.code == .dataCorrupted)
        #expect(codingError { try JSONValue.int(128).decoded(as: Int8.self) }?.code == .dataCorrupted)
        #expect(codingError { try JSONValue.double(1e30).decoded(as: Int.self) }?.code == .dataCorrupted)
        #expect(codingError { try JSONValue.double(-9.3e18).decoded(as: Int64.self) }?.code == .dataCorrupted)
        #expect(codingError { try JSONValue.double(.nan).decoded(as: Int.self) }?.code == .dataCorrupted)
        #expect(
            codingError { try JSONValue.double(1.5).decoded(as: Int.self) }?.message
                == "number 1.5 is not a whole number")
        #expect(codingError { try JSONValue.double(1e39).decoded(as: Float.self) }?.code == .dataCorrupted)
        #expect(
            codingError { try JSONValue.double(1.8446744073709552e19).decoded(as: UInt64.self) }?.code == .dataCorrupted
        )
    }

    @Test func numbersConvertWhereNothingIsLost() throws {
        #expect(try JSONValue.double(2.0).decoded(as: Int.self) == 2)
        #expect(try JSONValue.double(-128.0).decoded(as: Int8.self) == -128)
        #expect(try JSONValue.double(9_223_372_036_854_775_808.0).decoded(as: UInt64.self) == 1 << 63)
        #expect(try JSONValue.int(3).decoded(as: Double.self) == 3.0)
        #expect(try JSONValue.int(3).decoded(as: Float.self) == 3.0)
        #expect(try JSONValue.double(0.1).decoded(as: Float.self) == Float(0.1))
        #expect(try roundTrip(Float(0.1)) == Float(0.1))
        #expect(try roundTrip(-0.0).sign == .minus)
        #expect(try JSONValueDecoder().decode(Reading.self, from: ["value": 5]).value == 5)
    }

    @Test func wrongTypesMissingKeysAndNullsNameTheirPath() throws {
        let decoder = JSONValueDecoder()
        var document = try JSONValue(encoding: ada)
        guard case .object(var person) = document, case .array(var addresses)? = person["addresses"] else {
            Issue.record("unexpected shape \(document)")
            return
        }
        addresses[1] = ["street": 7]
        person["addresses"] = .array(addresses)
        document = .object(person)
        let mismatch = try #require(codingError { try decoder.decode(Person.self, from: document) })
        #expect(mismatch.code == .typeMismatch)
        #expect(mismatch.codingPath == "/addresses/1/street")
        #expect(mismatch.message == "expected a string, found a number")

        person["name"] = nil
        let missing = try #require(codingError { try decoder.decode(Person.self, from: .object(person)) })
        #expect(missing.code == .keyNotFound)
        #expect(missing.codingPath == "/name")

        person["name"] = .null
        let null = try #require(codingError { try decoder.decode(Person.self, from: .object(person)) })
        #expect(null.code == .valueNotFound)
        #expect(null.codingPath == "/name")

        let notAnObject = try #require(codingError { try decoder.decode(Person.self, from: [1, 2]) })
        #expect(notAnObject.code == .typeMismatch)
        #expect(notAnObject.codingPath == "")
        #expect(notAnObject.message == "expected an object, found an array")

        let shortTuple = try #require(
            codingError { try decoder.decode(Matrix.self, from: [["label": "m"], [1, "x"]]) })
        #expect(shortTuple.codingPath == "/1/1")

        let escaped = try #require(codingError { try decoder.decode([String: Int].self, from: ["a/b~c": "x"]) })
        #expect(escaped.codingPath == "/a~1b~0c")
    }

    @Test func nonFiniteNumbersAreRefused() throws {
        let nan = try #require(
            codingError { try JSONValueEncoder().encode(["readings": [Reading(value: 1), Reading(value: .nan)]]) })
        #expect(nan.code == .invalidValue)
        #expect(nan.codingPath == "/readings/1/value")
        #expect(codingError { try JSONValueEncoder().encode(Double.infinity) }?.codingPath == "")
        #expect(codingError { try JSONValueEncoder().encode([-Double.infinity]) }?.codingPath == "/0")
        #expect(codingError { try JSONValueEncoder().encode(Sample(value: .infinity)) }?.codingPath == "/value")
        #expect(codingError { try JSONValueEncoder().encode([Float.nan]) }?.code == .invalidValue)
    }

    @Test func jsonValuesPassThroughUnchanged() throws {
        let extra: JSONValue = ["z": 2.0, "a": [1, "x", nil], "m": ["inner": true]]
        let fields: JSONObject = ["second": 2, "first": 1.0]
        let payload = Payload(id: 1, extra: extra, fields: fields)
        let encoded = try JSONValue(encoding: payload)
        #expect(
            encoded.jsonString
                == #"{"id":1,"extra":{"z":2.0,"a":[1,"x",null],"m":{"inner":true}},"fields":{"second":2,"first":1.0}}"#)
        let decoded = try encoded.decoded(as: Payload.self)
        // `==` compares numbers by value and objects regardless of order; the text shows they are unchanged.
        #expect(JSONValue.object(decoded.fields).jsonString == #"{"second":2,"first":1.0}"#)
        #expect(decoded.extra.jsonString == extra.jsonString)
        #expect(try extra.decoded(as: JSONValue.self).jsonString == extra.jsonString)
        #expect(try JSONValue(encoding: extra).jsonString == extra.jsonString)
        #expect(try JSONValue.object(fields).decoded(as: JSONObject.self).keys == ["second", "first"])
        #expect(codingError { try JSONValue.int(1).decoded(as: JSONObject.self) }?.code == .typeMismatch)
    }

    @Test func jsonValueIsCodableWithOtherCoders() throws {
        let value: JSONValue = ["n": nil, "b": false, "i": 7, "d": 2.5, "s": "x", "a": [1, [2]], "o": ["k": "v"]]
        let text = try JSONEncoder().encode(value)
        let reparsed = try JSONValue(parsing: Array(text))
        #expect(reparsed == value)
        let decoded = try JSONDecoder().decode(JSONValue.self, from: text)
        #expect(decoded == value)
        #expect(decoded["i"].map { if case .int = $0 { true } else { false } } == true)
        #expect(try JSONDecoder().decode(JSONObject.self, from: Data(#"{"a":1}"#.utf8)) == ["a": 1])
    }

    @Test func customCodableWithNestedContainersAndSuperEncoders() throws {
        let success = Outcome<[Int]>.success([1, 2])
        let failure = Outcome<[Int]>.failure(code: 404, detail: "missing")
        #expect(try JSONValue(encoding: success).jsonString == #"{"ok":[1,2]}"#)
        #expect(try JSONValue(encoding: failure).jsonString == #"{"error":{"code":404,"super":"missing"}}"#)
        #expect(try roundTrip(success) == success)
        #expect(try roundTrip(failure) == failure)

        let dog = Dog(name: "Rex", legs: 4)
        let encodedDog = try JSONValue(encoding: dog)
        #expect(encodedDog.jsonString == #"{"name":"Rex","super":{"legs":4}}"#)
        let decodedDog = try encodedDog.decoded(as: Dog.self)
        #expect(decodedDog.name == "Rex" && decodedDog.legs == 4)

        let matrix = Matrix(label: "m", rows: [[1, 2], [], [3]])
        #expect(try JSONValue(encoding: matrix).jsonString == #"[{"label":"m"},[1,2],[],[3]]"#)
        #expect(try roundTrip(matrix) == matrix)
    }

    @Test func deepNestingFollowsTheValuesOwnDepth() throws {
        var chain = Chain.end
        for _ in 0..<300 { chain = .link(chain) }
        #expect(try roundTrip(chain) == chain)
    }

    @Test func misusedContainersAreErrorsNotTraps() throws {
        let mixed = try #require(codingError { try JSONValueEncoder().encode(["value": MixedContainers()]) })
        #expect(mixed.code == .invalidValue)
        #expect(mixed.codingPath == "/value")
        #expect(codingError { try JSONValueEncoder().encode(TwoSingleValues()) }?.code == .invalidValue)
    }

    @Test func errorsFromTheValuesOwnCode() throws {
        let range = try #require(
            codingError { try JSONValueDecoder().decode([Range].self, from: [["low": 3, "high": 1]]) })
        #expect(range.code == .dataCorrupted)
        #expect(range.codingPath == "/0/high")
        #expect(range.message == "high is below low")
        let email = try #require(codingError { try JSONValue.array(["x"]).decoded(as: [Email].self) })
        #expect(email.code == .other)
        #expect(email.message == "not an email address")
    }

    @Test func scalarsEmptyValuesAndUserInfo() throws {
        #expect(try JSONValue(encoding: "text") == "text")
        #expect(try JSONValue(encoding: true) == true)
        #expect(try JSONValue(encoding: Empty()).jsonString == "{}")
        #expect(try roundTrip(Empty()) == Empty())
        #expect(try roundTrip([String]()) == [])
        let integers: [Int] = try JSONValue.array([1, 2]).decoded()
        #expect(integers == [1, 2])

        let unitKey = try #require(Measured.unitKey)
        var encoder = JSONValueEncoder()
        encoder.userInfo[unitKey] = "cm"
        #expect(try encoder.encode([Measured()]) == ["cm"])
        var decoder = JSONValueDecoder()
        decoder.userInfo[unitKey] = "kg"
        #expect(try decoder.decode(Measured.self, from: nil).unit == "kg")
    }
}
