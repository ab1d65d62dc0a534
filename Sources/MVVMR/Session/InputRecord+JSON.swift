import JSONPatch

/// Why a JSON value is not an input record.
public struct InputRecordFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, naming the field.
    public let message: String

    /// An error saying `message`.
    /// - Parameter message: what is wrong.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

extension InputRecord {
    /// The record as JSON, in the log format of docs/PROTOCOL.md ("Session logs"):
    /// `{"number": 3, "time_ns": 1200000, "input": {"type": "action", …}, "digests": {"counters": "…"}}`.
    public var json: JSONValue {
        var object: JSONObject = [
            "number": .int(number), "time_ns": .int(Self.nanoseconds(time)), "input": input.json,
        ]
        var digestObject = JSONObject()
        for unit in digests.keys.sorted() {
            if let digest = digests[unit] { digestObject[unit] = .string(Self.hex(digest)) }
        }
        object["digests"] = .object(digestObject)
        object["seq"] = .int(sequence)
        object["revs"] = Self.json(revisions)
        if let annotation { object["annotation"] = annotation }
        return .object(object)
    }

    /// A record read back from its JSON.
    /// - Parameter json: the record, as ``json`` wrote it.
    /// - Throws: ``InputRecordFormatError`` naming the first field that is missing or of the wrong type.
    public init(json: JSONValue) throws(InputRecordFormatError) {
        guard case .object(let object) = json else { throw InputRecordFormatError("a record must be an object") }
        guard let number = object["number"]?.intValue, number > 0 else {
            throw InputRecordFormatError("'number' must be a positive integer")
        }
        guard let time = object["time_ns"]?.intValue else { throw InputRecordFormatError("'time_ns' must be an integer") }
        guard let inputJSON = object["input"] else { throw InputRecordFormatError("'input' is missing") }
        var digests: [String: UInt64] = [:]
        if let digestValue = object["digests"], !digestValue.isNull {
            guard case .object(let digestObject) = digestValue else {
                throw InputRecordFormatError("'digests' must be an object of hex strings")
            }
            for (unit, value) in digestObject {
                guard let text = value.stringValue, let digest = UInt64(text, radix: 16) else {
                    throw InputRecordFormatError("'digests.\(unit)' must be a hex string")
                }
                digests[unit] = digest
            }
        }
        var revisions: [String: Int] = [:]
        if case .object(let revisionObject)? = object["revs"] {
            for (unit, value) in revisionObject {
                guard let revision = value.intValue else { throw InputRecordFormatError("'revs.\(unit)' must be an integer") }
                revisions[unit] = revision
            }
        }
        let annotation = object["annotation"]
        self.init(
            number: number, time: .nanoseconds(time), input: try SessionInput(json: inputJSON), digests: digests,
            annotation: annotation.flatMap { $0.isNull ? nil : $0 }, sequence: object["seq"]?.intValue ?? 0,
            revisions: revisions)
    }

    static func nanoseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) &* 1_000_000_000 &+ Int(attoseconds / 1_000_000_000)
    }

    /// Pages' revisions as a JSON object, units in order (a record's and a snapshot's `revs`).
    static func json(_ revisions: [String: Int]) -> JSONValue {
        var object = JSONObject()
        for unit in revisions.keys.sorted() {
            if let revision = revisions[unit] { object[unit] = .int(revision) }
        }
        return .object(object)
    }

    static func hex(_ digest: UInt64) -> String {
        let digits = String(digest, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }
}

extension SessionInput {
    /// The input as JSON: an object whose `type` names the case.
    public var json: JSONValue {
        switch self {
        case .start(let unit, let parameters, let value, let seed, let wallClock):
            var object: JSONObject = [
                "type": "start", "unit": .string(unit), "parameters": Self.json(parameters),
                "seed": .string(InputRecord.hex(seed)), "wall_clock_ns": .int(InputRecord.nanoseconds(wallClock)),
            ]
            if let value { object["value"] = value }
            return .object(object)
        case .bind(let unit, let parameters):
            return ["type": "bind", "unit": .string(unit), "parameters": Self.json(parameters)]
        case .action(let unit, let name, let value, let clientRevision):
            var object: JSONObject = ["type": "action", "unit": .string(unit), "action": .string(name), "value": value]
            if let clientRevision { object["rev"] = .int(clientRevision) }
            return .object(object)
        case .navigate(.back):
            return ["type": "navigate", "navigation": "back"]
        case .navigate(.forward):
            return ["type": "navigate", "navigation": "forward"]
        case .navigate(.open(let unit, let parameters)):
            return ["type": "navigate", "navigation": "open", "unit": .string(unit), "parameters": Self.json(parameters)]
        case .timer(let ordinal):
            return ["type": "timer", "ordinal": .int(ordinal)]
        case .work(let ordinal, let result):
            return ["type": "work", "ordinal": .int(ordinal), "result": result]
        case .rebind(let unit, let revision):
            return ["type": "rebind", "unit": .string(unit), "rev": .int(revision)]
        case .topic(let name, let value):
            return ["type": "topic", "topic": .string(name), "value": value]
        }
    }

    /// An input read back from its JSON.
    /// - Parameter json: the input, as ``json`` wrote it.
    /// - Throws: ``InputRecordFormatError`` naming the first field that is wrong.
    public init(json: JSONValue) throws(InputRecordFormatError) {
        guard case .object(let object) = json, let type = object["type"]?.stringValue else {
            throw InputRecordFormatError("'input' must be an object with a string 'type'")
        }
        func string(_ key: String) throws(InputRecordFormatError) -> String {
            guard let text = object[key]?.stringValue else { throw InputRecordFormatError("'input.\(key)' must be a string") }
            return text
        }
        func integer(_ key: String) throws(InputRecordFormatError) -> Int {
            guard let number = object[key]?.intValue else { throw InputRecordFormatError("'input.\(key)' must be an integer") }
            return number
        }
        func parameters() throws(InputRecordFormatError) -> [String: String] {
            guard let value = object["parameters"], !value.isNull else { return [:] }
            guard case .object(let members) = value else {
                throw InputRecordFormatError("'input.parameters' must be an object of strings")
            }
            var parameters: [String: String] = [:]
            for (key, item) in members {
                guard let text = item.stringValue else {
                    throw InputRecordFormatError("'input.parameters' must be an object of strings")
                }
                parameters[key] = text
            }
            return parameters
        }
        switch type {
        case "start":
            let value = object["value"]
            let seed = object["seed"]?.stringValue.flatMap { UInt64($0, radix: 16) } ?? 0
            let wallClock = Duration.nanoseconds(object["wall_clock_ns"]?.intValue ?? 0)
            self = .start(unit: try string("unit"), parameters: try parameters(), value: value, seed: seed, wallClock: wallClock)
        case "bind":
            self = .bind(unit: try string("unit"), parameters: try parameters())
        case "action":
            let revision: Int?
            if let rev = object["rev"], !rev.isNull {
                guard let number = rev.intValue else { throw InputRecordFormatError("'input.rev' must be an integer") }
                revision = number
            } else {
                revision = nil
            }
            self = .action(
                unit: try string("unit"), name: try string("action"), value: object["value"] ?? .null,
                clientRevision: revision)
        case "navigate":
            switch try string("navigation") {
            case "back": self = .navigate(.back)
            case "forward": self = .navigate(.forward)
            case "open": self = .navigate(.open(try string("unit"), parameters: try parameters()))
            default: throw InputRecordFormatError("'input.navigation' must be \"back\", \"forward\" or \"open\"")
            }
        case "timer":
            self = .timer(try integer("ordinal"))
        case "work":
            self = .work(try integer("ordinal"), object["result"] ?? .null)
        case "rebind":
            self = .rebind(unit: try string("unit"), revision: try integer("rev"))
        case "topic":
            self = .topic(name: try string("topic"), value: object["value"] ?? .null)
        default:
            throw InputRecordFormatError("'input.type' \(type) is not an input type")
        }
    }

    private static func json(_ parameters: [String: String]) -> JSONValue {
        var object = JSONObject()
        for key in parameters.keys.sorted() {
            if let value = parameters[key] { object[key] = .string(value) }
        }
        return .object(object)
    }
}
