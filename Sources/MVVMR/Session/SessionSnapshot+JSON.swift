import JSONPatch

extension SessionSnapshot {
    /// The name in a snapshot's `format` member.
    public static let formatName = "mvvmr-session-snapshot"
    /// The version of the snapshot's JSON this library writes (and the newest it reads).
    public static let formatVersion = 1

    /// The snapshot as JSON, in the format of docs/PROTOCOL.md ("Session snapshots"):
    /// `{"format": "mvvmr-session-snapshot", "version": 1, "number": 1001, "pages": [{"unit": "counters", …}], …}`.
    public var json: JSONValue {
        var object: JSONObject = [
            "format": .string(Self.formatName), "version": .int(Self.formatVersion), "number": .int(number),
            "time_ns": .int(InputRecord.nanoseconds(time)), "seq": .int(sequence), "seed": .string(InputRecord.hex(seed)),
            "wall_clock_ns": .int(InputRecord.nanoseconds(wallClock)), "binds": .int(bindCount),
            "next_ordinal": .int(nextOrdinal),
        ]
        object["stack"] = .array(stack.map { ["unit": .string($0.unit), "presented": .bool($0.presented)] })
        // Written only when there is one, so a snapshot without it reads the same in a version that has no forward list.
        if !forward.isEmpty {
            object["forward"] = .array(forward.map { ["unit": .string($0.unit), "presented": .bool($0.presented)] })
        }
        object["pages"] = .array(pages.map(\.json))
        object["revs"] = InputRecord.json(revisions)
        if let annotation { object["annotation"] = annotation }
        return .object(object)
    }

    /// A snapshot read back from its JSON.
    /// - Parameter json: the snapshot, as ``json`` wrote it.
    /// - Throws: ``InputRecordFormatError`` naming the first field that is missing or wrong (a newer version too).
    public init(json: JSONValue) throws(InputRecordFormatError) {
        guard case .object(let object) = json else { throw InputRecordFormatError("a snapshot must be an object") }
        guard object["format"]?.stringValue == Self.formatName else {
            throw InputRecordFormatError("'snapshot.format' must be \"\(Self.formatName)\"")
        }
        guard let version = object["version"]?.intValue, (1...Self.formatVersion).contains(version) else {
            throw InputRecordFormatError("'snapshot.version' must be 1 to \(Self.formatVersion), the versions this library reads")
        }
        func integer(_ key: String) throws(InputRecordFormatError) -> Int {
            guard let value = object[key]?.intValue else { throw InputRecordFormatError("'snapshot.\(key)' must be an integer") }
            return value
        }
        func hex(_ text: JSONValue?, _ field: String) throws(InputRecordFormatError) -> UInt64 {
            guard let digits = text?.stringValue, let value = UInt64(digits, radix: 16) else {
                throw InputRecordFormatError("'\(field)' must be a hex string")
            }
            return value
        }
        func entries(_ key: String) throws(InputRecordFormatError) -> [StackEntry] {
            var entries: [StackEntry] = []
            for entry in object[key]?.arrayValue ?? [] {
                guard let unit = entry["unit"]?.stringValue else {
                    throw InputRecordFormatError("'snapshot.\(key)[].unit' must be a string")
                }
                entries.append(StackEntry(unit: unit, presented: entry["presented"]?.boolValue ?? false))
            }
            return entries
        }
        let stack = try entries("stack")
        let forward = try entries("forward")
        var pages: [SavedPage] = []
        for page in object["pages"]?.arrayValue ?? [] { pages.append(try SavedPage(json: page)) }
        var revisions: [String: Int] = [:]
        for (unit, value) in object["revs"]?.objectValue ?? [:] {
            guard let revision = value.intValue else { throw InputRecordFormatError("'snapshot.revs.\(unit)' must be an integer") }
            revisions[unit] = revision
        }
        let annotation = object["annotation"].flatMap { $0.isNull ? nil : $0 }
        self.init(
            number: try integer("number"), time: .nanoseconds(try integer("time_ns")), sequence: try integer("seq"),
            seed: try hex(object["seed"], "snapshot.seed"), wallClock: .nanoseconds(try integer("wall_clock_ns")),
            bindCount: try integer("binds"), nextOrdinal: try integer("next_ordinal"), stack: stack, forward: forward,
            pages: pages,
            revisions: revisions, annotation: annotation)
    }
}

extension SessionSnapshot.SavedPage {
    /// The page as JSON: `{"unit", "parameters", "value"?, "rev", "view_digest", "random", "restore", "states"?}`.
    public var json: JSONValue {
        var parameterObject = JSONObject()
        for key in parameters.keys.sorted() {
            if let value = parameters[key] { parameterObject[key] = .string(value) }
        }
        var object: JSONObject = [
            "unit": .string(unit), "parameters": .object(parameterObject), "rev": .int(revision),
            "view_digest": .string(InputRecord.hex(viewDigest)), "random": .string(InputRecord.hex(random)),
        ]
        if let sentValue { object["value"] = sentValue }
        switch restoration {
        case .savedStates(let states):
            object["restore"] = "saved"
            object["states"] = .array(states)
        case .bindAgain:
            object["restore"] = "bind"
        case .boundFresh:
            object["restore"] = "fresh"
        }
        return .object(object)
    }

    /// A page read back from its JSON.
    /// - Parameter json: the page, as ``json`` wrote it.
    /// - Throws: ``InputRecordFormatError`` naming the first field that is wrong.
    public init(json: JSONValue) throws(InputRecordFormatError) {
        guard case .object(let object) = json, let unit = object["unit"]?.stringValue else {
            throw InputRecordFormatError("'snapshot.pages[].unit' must be a string")
        }
        guard let revision = object["rev"]?.intValue else {
            throw InputRecordFormatError("'snapshot.pages[].rev' must be an integer")
        }
        guard let digestText = object["view_digest"]?.stringValue, let viewDigest = UInt64(digestText, radix: 16),
            let randomText = object["random"]?.stringValue, let random = UInt64(randomText, radix: 16)
        else {
            throw InputRecordFormatError("'snapshot.pages[].view_digest' and 'random' must be hex strings")
        }
        var parameters: [String: String] = [:]
        for (key, value) in object["parameters"]?.objectValue ?? [:] {
            guard let text = value.stringValue else {
                throw InputRecordFormatError("'snapshot.pages[].parameters' must be an object of strings")
            }
            parameters[key] = text
        }
        let restoration: SessionSnapshot.Restoration
        switch object["restore"]?.stringValue {
        case "saved":
            guard let states = object["states"]?.arrayValue else {
                throw InputRecordFormatError("'snapshot.pages[].states' must be an array")
            }
            restoration = .savedStates(states)
        case "bind": restoration = .bindAgain
        case "fresh": restoration = .boundFresh
        default: throw InputRecordFormatError("'snapshot.pages[].restore' must be \"saved\", \"bind\" or \"fresh\"")
        }
        self.init(
            unit: unit, parameters: parameters, sentValue: object["value"].flatMap { $0.isNull ? nil : $0 },
            revision: revision, viewDigest: viewDigest, random: random, restoration: restoration)
    }
}
