/// The `Encoder` behind ``JSONValueEncoder``: one instance collects one composite value (an object,
/// an array, or a single value that is not one of the scalars written directly).
///
/// Members and elements are stored as finished ``JSONValue``s as soon as they are encoded. Only a nested
/// container or a super encoder, which its caller fills in after getting it, stays an encoder of its own
/// until ``finishedValue()``; its place in the object or array is reserved when it is handed out, so the
/// member order is the order of the calls.
///
/// The `Encoder` protocol forbids mixing container kinds on one encoder; `Foundation`'s coders trap.
/// This one must not trap on what a value does, so a mixed request gets a container whose writes go
/// nowhere, and the misuse is thrown when the value is finished.
final class JSONTreeEncoder: Encoder {
    /// What the encoder has been asked to produce so far.
    enum Shape {
        case nothing
        case singleValue
        case object
        case array
    }

    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]
    /// Whether an absent optional member is written as `null` (``JSONValueEncoder/writesNilMembers``) rather than
    /// left out.
    let writesNilMembers: Bool

    private var shape = Shape.nothing
    private var singleValue = JSONValue.null
    private var object = JSONObject()
    private var elements: [JSONValue] = []
    /// Members handed out as nested containers or super encoders, in the order they were handed out.
    private var pendingMembers: [(key: String, encoder: JSONTreeEncoder)] = []
    /// Elements handed out as nested containers or super encoders.
    private var pendingElements: [(index: Int, encoder: JSONTreeEncoder)] = []
    /// The first violation of the `Encoder` protocol's rules, thrown by ``finishedValue()``.
    private var misuse: EncodingError?

    init(codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: Any], writesNilMembers: Bool) {
        self.codingPath = codingPath
        self.userInfo = userInfo
        self.writesNilMembers = writesNilMembers
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(JSONTreeKeyedEncodingContainer<Key>(encoder: target(for: .object)))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        JSONTreeUnkeyedEncodingContainer(encoder: target(for: .array))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        JSONTreeSingleValueEncodingContainer(encoder: self)
    }

    /// `self` if it produces `requested` (or nothing yet); otherwise a detached encoder, after noting the misuse.
    private func target(for requested: Shape) -> JSONTreeEncoder {
        if shape == .nothing { shape = requested }
        if shape == requested { return self }
        noteMisuse("asked for \(requested.containerName) after it encoded \(shape.encodedName)")
        let detached = JSONTreeEncoder(codingPath: codingPath, userInfo: userInfo, writesNilMembers: writesNilMembers)
        detached.shape = requested
        return detached
    }

    private func noteMisuse(_ explanation: String) {
        guard misuse == nil else { return }
        misuse = EncodingError.invalidValue(
            JSONValue.null,
            EncodingError.Context(codingPath: codingPath, debugDescription: "the value's encoder \(explanation)"))
    }

    /// The value, with every pending nested container and super encoder filled in.
    ///
    /// - Throws: the first misuse of the `Encoder` protocol here or in a pending encoder.
    func finishedValue() throws -> JSONValue {
        if let misuse { throw misuse }
        switch shape {
        case .nothing:
            return .object(JSONObject())
        case .singleValue:
            return singleValue
        case .object:
            var finished = object
            for pending in pendingMembers {
                try finished.updateValue(pending.encoder.finishedValue(), forKey: pending.key)
            }
            return .object(finished)
        case .array:
            var finished = elements
            for pending in pendingElements {
                finished[pending.index] = try pending.encoder.finishedValue()
            }
            return .array(finished)
        }
    }
}

// MARK: - Storage, used by the containers

extension JSONTreeEncoder {
    /// Sets a member of the object (replacing a nested container handed out for the same key).
    func setMember(_ value: JSONValue, forKey key: String) {
        object.updateValue(value, forKey: key)
        if !pendingMembers.isEmpty { pendingMembers.removeAll { $0.key == key } }
    }

    /// The encoder for a member to be filled in later, reserving the member's place now.
    ///
    /// Asking twice for the same key gives the same encoder, so that two nested containers for one
    /// key (say, in a class and its superclass) add to one object, as with `Foundation`'s encoder.
    func pendingMember(forKey key: any CodingKey) -> JSONTreeEncoder {
        if let existing = pendingMembers.first(where: { $0.key == key.stringValue }) { return existing.encoder }
        let member = JSONTreeEncoder(codingPath: codingPath + [key], userInfo: userInfo, writesNilMembers: writesNilMembers)
        object.updateValue(.null, forKey: key.stringValue)
        pendingMembers.append((key.stringValue, member))
        return member
    }

    /// The number of elements of the array so far.
    var elementCount: Int { elements.count }

    /// Appends an element to the array.
    func appendElement(_ value: JSONValue) {
        elements.append(value)
    }

    /// The encoder for an element to be filled in later, appending its place now.
    func pendingElement() -> JSONTreeEncoder {
        let index = elements.count
        let element = JSONTreeEncoder(codingPath: codingPath + [JSONValueCodingKey(index: index)], userInfo: userInfo, writesNilMembers: writesNilMembers)
        elements.append(.null)
        pendingElements.append((index, element))
        return element
    }

    /// Sets the encoder's single value.
    ///
    /// - Throws: `EncodingError.invalidValue` if the encoder already holds a value or a container.
    func setSingleValue(_ value: JSONValue) throws {
        switch shape {
        case .nothing:
            shape = .singleValue
            singleValue = value
        case .singleValue:
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPath, debugDescription: "a single value container was given a second value"))
        case .object, .array:
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "a single value container was used after the encoder encoded \(shape.encodedName)"
                ))
        }
    }
}

extension JSONTreeEncoder.Shape {
    fileprivate var containerName: String {
        switch self {
        case .nothing: "no container"
        case .singleValue: "a single value container"
        case .object: "a keyed container"
        case .array: "an unkeyed container"
        }
    }

    fileprivate var encodedName: String {
        switch self {
        case .nothing: "nothing"
        case .singleValue: "a single value"
        case .object: "an object"
        case .array: "an array"
        }
    }
}

// MARK: - Values

extension JSONTreeEncoder {
    /// The JSON value of `value`, found at `codingPath`.
    ///
    /// Strings, `Int`s, `Double`s, Booleans and ``JSONValue``s become JSON values directly; any other value
    /// encodes itself into an encoder of its own.
    static func value<T: Encodable>(
        of value: T, at codingPath: @autoclosure () -> [any CodingKey], userInfo: [CodingUserInfoKey: Any],
        writesNilMembers: Bool
    ) throws -> JSONValue {
        // Comparing the types first makes each check a pointer comparison (or nothing, once specialized)
        // instead of a dynamic cast.
        if T.self == JSONValue.self, let json = value as? JSONValue { return json }
        if T.self == String.self, let string = value as? String { return .string(string) }
        if T.self == Int.self, let integer = value as? Int { return .int(integer) }
        if T.self == Bool.self, let bool = value as? Bool { return .bool(bool) }
        if T.self == Double.self, let number = value as? Double { return try finite(number, at: codingPath()) }
        if T.self == JSONObject.self, let object = value as? JSONObject { return .object(object) }
        let encoder = JSONTreeEncoder(codingPath: codingPath(), userInfo: userInfo, writesNilMembers: writesNilMembers)
        try value.encode(to: encoder)
        let encoded = try encoder.finishedValue()
        if let collection = T.self as? any HashOrderedCollection.Type {
            return encoded.sortedForDeterminism(entryWidth: collection.encodedEntryWidth)
        }
        return encoded
    }

    /// `.double(number)`, if JSON can hold it.
    ///
    /// - Throws: `EncodingError.invalidValue` for NaN and the infinities.
    static func finite(_ number: Double, at codingPath: @autoclosure () -> [any CodingKey]) throws -> JSONValue {
        guard number.isFinite else {
            throw EncodingError.invalidValue(
                number,
                EncodingError.Context(
                    codingPath: codingPath(), debugDescription: "\(number) is not a finite number; JSON cannot hold it")
            )
        }
        return .double(number)
    }

    /// `.double` of a `Float` (widened exactly), if JSON can hold it.
    static func finite(_ number: Float, at codingPath: @autoclosure () -> [any CodingKey]) throws -> JSONValue {
        guard number.isFinite else {
            throw EncodingError.invalidValue(
                number,
                EncodingError.Context(
                    codingPath: codingPath(), debugDescription: "\(number) is not a finite number; JSON cannot hold it")
            )
        }
        return .double(Double(number))
    }

    /// `.int` of an integer, or `.double` if it is beyond `Int`'s range but a `Double` holds it exactly.
    ///
    /// - Throws: `EncodingError.invalidValue` for an integer a ``JSONValue`` cannot hold exactly.
    static func integer<Integer: FixedWidthInteger>(
        _ number: Integer, at codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> JSONValue {
        if let exact = Int(exactly: number) { return .int(exact) }
        if number > 0, let unsigned = UInt64(exactly: number) {
            let floating = Double(unsigned)
            // Converting back is safe below 2^64; above, the conversion rounded up and is not exact anyway.
            if floating < 18_446_744_073_709_551_616.0 && UInt64(floating) == unsigned { return .double(floating) }
        }
        throw EncodingError.invalidValue(
            number,
            EncodingError.Context(
                codingPath: codingPath(),
                debugDescription:
                    "\(number) is beyond Int's range and not exactly a Double; a JSON value cannot hold it"))
    }
}

// MARK: - Determinism

/// A standard collection whose iteration order follows hashing, which is seeded differently in every
/// process; the encoder sorts what it encodes so that equal collections always give the same JSON.
protocol HashOrderedCollection {
    /// How many consecutive array elements make one entry when the collection encodes as an array:
    /// a key and its value for a dictionary, one element for a set.
    static var encodedEntryWidth: Int { get }
}

extension Dictionary: HashOrderedCollection {
    static var encodedEntryWidth: Int { 2 }
}

extension Set: HashOrderedCollection {
    static var encodedEntryWidth: Int { 1 }
}

extension JSONValue {
    /// An object with its members sorted by the UTF-8 bytes of their keys, or an array with its entries
    /// (runs of `entryWidth` elements) sorted by the bytes of their JSON text. Dictionary keys are unique,
    /// so the members never tie.
    fileprivate func sortedForDeterminism(entryWidth: Int) -> JSONValue {
        switch self {
        case .object(let object):
            let members = object.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            return .object(JSONObject(members.map { ($0.key, $0.value) }))
        case .array(let elements)
        where entryWidth > 0 && elements.count % entryWidth == 0 && elements.count > entryWidth:
            var entries: [(text: [UInt8], elements: ArraySlice<JSONValue>)] = []
            entries.reserveCapacity(elements.count / entryWidth)
            for start in stride(from: 0, to: elements.count, by: entryWidth) {
                let entry = elements[start..<(start + entryWidth)]
                var text: [UInt8] = []
                for element in entry {
                    // A zero byte never occurs in JSON text: with it between elements, equal texts mean
                    // equal entries (`1`,`23` and `12`,`3` would otherwise tie, and keep their hash order).
                    element.encode(into: &text)
                    text.append(0)
                }
                entries.append((text, entry))
            }
            entries.sort { $0.text.lexicographicallyPrecedes($1.text) }
            return .array(entries.flatMap(\.elements))
        default:
            return self
        }
    }
}
