import JSONPatch
import Locking

/// The JSON Schema (2020-12, as OpenAPI 3.1 uses it) of a `Decodable` type, derived from the type itself: the
/// type is decoded once from a decoder that answers every request and notes what was asked for.
///
/// What it describes: structs and classes (their members, required unless optional), arrays and sets,
/// dictionaries keyed by strings, optionals (`null` allowed), strings, booleans, integers and numbers, and
/// types that describe themselves (``JSONSchemaDescribing``, which every `String` enum that is `CaseIterable`
/// can adopt with no code). What it cannot describe, it says so with the empty schema `{}` (anything), and
/// never guesses: an enum without ``JSONSchemaDescribing``, a value whose decoding checks its content, a type
/// nested deeper than 16 levels (a recursive type).
///
/// ```swift
/// struct NewItem: Codable { var title: String; var done: Bool?; var tags: [String] }
/// JSONSchema.of(NewItem.self).document
/// // {"type": "object", "properties": {"title": {"type": "string"}, "done": {"type": ["boolean", "null"]},
/// //  "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["title", "tags"]}
/// ```
public struct JSONSchema: Sendable, Hashable {
    /// The schema as JSON.
    public let document: JSONValue

    /// The schema of `type`.
    /// - Parameter type: a `Decodable` type.
    public static func of<Value: Decodable>(_ type: Value.Type) -> JSONSchema {
        let key = ObjectIdentifier(type)
        if let known = cache.withLock({ $0[key] }) { return known }
        let schema = JSONSchema(document: SchemaProbe.schema(of: type, depth: 0))
        cache.withLock { $0[key] = schema }
        return schema
    }

    /// Schemas already derived, by type: a page declares its actions at every bind, and a type's schema never changes.
    private static let cache = Locked<[ObjectIdentifier: JSONSchema]>([:])

    /// The JSON type an action's value of this schema has, for the unit's action list.
    var actionValueType: ActionValueType {
        switch document["type"]?.stringValue {
        case "string": return .string
        case "integer": return .int
        case "number": return .number
        case "boolean": return .bool
        case "array": return .array
        case "null": return .none
        case "object": return .object
        default: return .any  // undescribed: decoding alone decides
        }
    }

    /// A schema that also allows `null`.
    static func nullable(_ schema: JSONValue) -> JSONValue {
        guard case .object(var object) = schema else { return schema }
        if object.isEmpty { return schema }
        switch object["type"] {
        case .string(let type)?:
            object["type"] = ["\(type)", "null"]
            return .object(object)
        default:
            return ["anyOf": [schema, ["type": "null"]]]
        }
    }
}

/// A type that states its own JSON Schema and a sample value, for types the derivation cannot read (enums,
/// types with hand-written decoding). A `String` enum that is `CaseIterable` gets both for free:
///
/// ```swift
/// enum Filter: String, Codable, CaseIterable, JSONSchemaDescribing { case all, open, done }
/// // {"type": "string", "enum": ["all", "open", "done"]}
/// ```
public protocol JSONSchemaDescribing: Decodable {
    /// The type's schema.
    static var jsonSchema: JSONValue { get }
    /// Any valid value, so that the derivation can go on past it; nil when there is none.
    static var schemaSample: Self? { get }
}

extension JSONSchemaDescribing where Self: CaseIterable & RawRepresentable, RawValue == String {
    /// A string that is one of the cases' raw values.
    public static var jsonSchema: JSONValue {
        ["type": "string", "enum": .array(allCases.map { .string($0.rawValue) })]
    }

    /// The first case.
    public static var schemaSample: Self? { allCases.first }
}

/// One derivation's state: the types being described on the current path, outermost first.
final class SchemaProbeRun {
    var path: [ObjectIdentifier] = []
}

/// An `Optional`, seen through a metatype: the schema of what it wraps, and a nil.
protocol OptionalSchemaSample {
    /// The wrapped type's schema.
    static func wrappedSchema(depth: Int, run: SchemaProbeRun) -> JSONValue
    /// `nil`, as the optional type.
    static var noneSample: Any { get }
}

extension Optional: OptionalSchemaSample where Wrapped: Decodable {
    static func wrappedSchema(depth: Int, run: SchemaProbeRun) -> JSONValue {
        let node = SchemaNode()
        _ = SchemaProbe.sample(of: Wrapped.self, into: node, depth: depth, run: run)
        return node.document
    }

    static var noneSample: Any { Wrapped?.none as Any }
}

/// What the probe learned of one value.
final class SchemaNode {
    enum Shape {
        case unknown
        case scalar(String)
        case described(JSONValue)
        case object
        case array
    }

    var shape = Shape.unknown
    /// Members in the order they were asked for, with whether they may be absent.
    var properties: [(key: String, node: SchemaNode, optional: Bool)] = []
    /// For a dictionary: its values.
    var additional: SchemaNode?
    /// For an array: its elements.
    var items: SchemaNode?
    /// Whether decoding failed under this node (it then says nothing).
    var failed = false

    var document: JSONValue {
        // A value that failed to decode says nothing, but an object says what it learned of its members before the
        // one that failed (that one is `{}`; those after it are not listed, so not required either).
        if failed {
            guard case .object = shape, additional == nil, !properties.isEmpty else { return [:] }
        }
        switch shape {
        case .unknown:
            return [:]
        case .scalar(let type):
            return ["type": .string(type)]
        case .described(let schema):
            return schema
        case .array:
            return ["type": "array", "items": items?.document ?? [:]]
        case .object:
            var object: JSONObject = ["type": "object"]
            if let additional {
                object["additionalProperties"] = additional.document
                return .object(object)
            }
            var members = JSONObject()
            var required: [JSONValue] = []
            for property in properties where members[property.key] == nil {
                let schema = property.node.document
                members[property.key] = property.optional ? JSONSchema.nullable(schema) : schema
                if !property.optional { required.append(.string(property.key)) }
            }
            object["properties"] = .object(members)
            if !required.isEmpty { object["required"] = .array(required) }
            return .object(object)
        }
    }
}

/// The decoder that answers every request with a sample value and notes the requests in a ``SchemaNode``.
struct SchemaProbe: Decoder {
    /// Below this depth the probe stops: optionals decode as nil and arrays as empty.
    static let depthLimit = 16
    /// The key offered to a dictionary's decoding through `allKeys`.
    static let offeredKey = "\u{1}additionalProperty"

    let node: SchemaNode
    let depth: Int
    /// The run this probe belongs to: the types being described on the current path.
    let run: SchemaProbeRun
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// The schema of `type`, as JSON.
    static func schema<Value: Decodable>(of type: Value.Type, depth: Int) -> JSONValue {
        let node = SchemaNode()
        _ = sample(of: type, into: node, depth: depth, run: SchemaProbeRun())
        return node.document
    }

    /// Decodes a sample of `type`, noting its shape in `node`; nil when it does not decode.
    static func sample<Value: Decodable>(
        of type: Value.Type, into node: SchemaNode, depth: Int, run: SchemaProbeRun
    ) -> Value? {
        if let described = type as? any JSONSchemaDescribing.Type {
            node.shape = .described(described.jsonSchema)
            return described.schemaSample as? Value
        }
        if type == JSONValue.self {
            node.shape = .unknown
            return JSONValue.null as? Value
        }
        if let optional = type as? any OptionalSchemaSample.Type {
            // An optional anywhere (an element, a dictionary's value, an action's value): its wrapped type's schema,
            // with `null` allowed; nil is a valid sample.
            node.shape = .described(JSONSchema.nullable(optional.wrappedSchema(depth: depth, run: run)))
            return optional.noneSample as? Value
        }
        // A type met again on its own path is recursive: described once, `{}` below (so a type with several
        // recursive members costs one pass, not one per path).
        guard depth < depthLimit, !isRecursive(type, in: run) else {
            node.failed = true
            return nil
        }
        run.path.append(ObjectIdentifier(type))
        defer { run.path.removeLast() }
        do {
            return try Value(from: SchemaProbe(node: node, depth: depth + 1, run: run))
        } catch {
            node.failed = true
            return nil
        }
    }

    /// Whether `type` is being described on the current path (so a sample of it would recurse).
    static func isRecursive(_ type: Any.Type, in run: SchemaProbeRun) -> Bool {
        run.path.contains(ObjectIdentifier(type))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        node.shape = .object
        return KeyedDecodingContainer(SchemaKeyedProbe<Key>(probe: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        node.shape = .array
        return SchemaUnkeyedProbe(probe: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SchemaSingleValueProbe(probe: self)
    }

    /// A sample of a scalar type, noting its JSON type.
    func scalar<Value>(_ value: Value, type: String) -> Value {
        node.shape = .scalar(type)
        return value
    }

    /// The error a probe throws where a sample cannot be made.
    func undescribable(_ reason: String) -> DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath, debugDescription: reason))
    }
}

/// The single-value container of a ``SchemaProbe``.
struct SchemaSingleValueProbe: SingleValueDecodingContainer {
    let probe: SchemaProbe
    var codingPath: [any CodingKey] { probe.codingPath }

    func decodeNil() -> Bool {
        // An optional at the top: described as its wrapped type (the caller marks it nullable).
        probe.depth >= SchemaProbe.depthLimit
    }
    func decode(_ type: Bool.Type) throws -> Bool { probe.scalar(false, type: "boolean") }
    func decode(_ type: String.Type) throws -> String { probe.scalar("", type: "string") }
    func decode(_ type: Double.Type) throws -> Double { probe.scalar(0, type: "number") }
    func decode(_ type: Float.Type) throws -> Float { probe.scalar(0, type: "number") }
    func decode(_ type: Int.Type) throws -> Int { probe.scalar(0, type: "integer") }
    func decode(_ type: Int8.Type) throws -> Int8 { probe.scalar(0, type: "integer") }
    func decode(_ type: Int16.Type) throws -> Int16 { probe.scalar(0, type: "integer") }
    func decode(_ type: Int32.Type) throws -> Int32 { probe.scalar(0, type: "integer") }
    func decode(_ type: Int64.Type) throws -> Int64 { probe.scalar(0, type: "integer") }
    func decode(_ type: UInt.Type) throws -> UInt { probe.scalar(0, type: "integer") }
    func decode(_ type: UInt8.Type) throws -> UInt8 { probe.scalar(0, type: "integer") }
    func decode(_ type: UInt16.Type) throws -> UInt16 { probe.scalar(0, type: "integer") }
    func decode(_ type: UInt32.Type) throws -> UInt32 { probe.scalar(0, type: "integer") }
    func decode(_ type: UInt64.Type) throws -> UInt64 { probe.scalar(0, type: "integer") }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // The wrapper's schema is its content's: decode the content into this node.
        guard let value = SchemaProbe.sample(of: type, into: probe.node, depth: probe.depth, run: probe.run) else {
            throw probe.undescribable("\(type) cannot be described")
        }
        return value
    }
}

/// The keyed container of a ``SchemaProbe``: every key is there, holding a sample.
struct SchemaKeyedProbe<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let probe: SchemaProbe
    var codingPath: [any CodingKey] { probe.codingPath }

    /// One key, for a dictionary's decoding (a type's own coding keys refuse it, so a struct sees none).
    var allKeys: [Key] { Key(stringValue: SchemaProbe.offeredKey).map { [$0] } ?? [] }

    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool { probe.depth >= SchemaProbe.depthLimit }

    /// Decodes a sample for `key`, noting it as a member (or the dictionary's values).
    private func member<T: Decodable>(_ type: T.Type, forKey key: Key, optional: Bool) throws -> T {
        let node = SchemaNode()
        if key.stringValue == SchemaProbe.offeredKey {
            probe.node.additional = node
        } else {
            probe.node.properties.append((key.stringValue, node, optional))
        }
        guard let value = SchemaProbe.sample(of: type, into: node, depth: probe.depth, run: probe.run) else {
            throw probe.undescribable("\(key.stringValue) cannot be described")
        }
        return value
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try member(type, forKey: key, optional: false)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        // Past the depth limit, or a type on its own path: described as anything, and absent, so decoding goes on.
        guard probe.depth < SchemaProbe.depthLimit, !SchemaProbe.isRecursive(T.self, in: probe.run) else {
            probe.node.properties.append((key.stringValue, SchemaNode(), true))
            return nil
        }
        return try member(type, forKey: key, optional: true)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try member(type, forKey: key, optional: false) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try member(type, forKey: key, optional: false)
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try member(type, forKey: key, optional: false)
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try member(type, forKey: key, optional: false) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try member(type, forKey: key, optional: true)
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try member(type, forKey: key, optional: true)
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try member(type, forKey: key, optional: true)
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try member(type, forKey: key, optional: true)
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try member(type, forKey: key, optional: true)
    }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        try member(type, forKey: key, optional: true)
    }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        try member(type, forKey: key, optional: true)
    }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        try member(type, forKey: key, optional: true)
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try member(type, forKey: key, optional: true)
    }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        try member(type, forKey: key, optional: true)
    }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        try member(type, forKey: key, optional: true)
    }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        try member(type, forKey: key, optional: true)
    }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        try member(type, forKey: key, optional: true)
    }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        try member(type, forKey: key, optional: true)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let node = SchemaNode()
        probe.node.properties.append((key.stringValue, node, false))
        return try SchemaProbe(node: node, depth: probe.depth + 1, run: probe.run).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let node = SchemaNode()
        probe.node.properties.append((key.stringValue, node, false))
        return try SchemaProbe(node: node, depth: probe.depth + 1, run: probe.run).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { throw probe.undescribable("a super decoder cannot be described") }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        throw probe.undescribable("a super decoder cannot be described")
    }
}

/// The unkeyed container of a ``SchemaProbe``: one element, which describes them all.
final class SchemaUnkeyedProbe: UnkeyedDecodingContainer {
    let probe: SchemaProbe
    var codingPath: [any CodingKey] { probe.codingPath }
    var count: Int? { nil }
    private(set) var currentIndex = 0
    var isAtEnd: Bool { currentIndex > 0 || probe.depth >= SchemaProbe.depthLimit }

    init(probe: SchemaProbe) {
        self.probe = probe
    }

    func decodeNil() -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        currentIndex += 1
        let node = SchemaNode()
        probe.node.items = node
        guard let value = SchemaProbe.sample(of: type, into: node, depth: probe.depth, run: probe.run) else {
            throw probe.undescribable("the elements cannot be described")
        }
        return value
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        currentIndex += 1
        let node = SchemaNode()
        probe.node.items = node
        return try SchemaProbe(node: node, depth: probe.depth + 1, run: probe.run).container(keyedBy: type)
    }

    func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        currentIndex += 1
        let node = SchemaNode()
        probe.node.items = node
        return try SchemaProbe(node: node, depth: probe.depth + 1, run: probe.run).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { throw probe.undescribable("a super decoder cannot be described") }
}

extension JSONSchema {
    /// `schema` with `part` as the (required) member at `tokens`, making the objects on the way.
    static func placing(_ part: JSONValue, at tokens: ArraySlice<String>, in schema: JSONValue) -> JSONValue {
        guard let key = tokens.first else { return part }
        var object = schema.objectValue ?? JSONObject()
        if object.isEmpty { object["type"] = "object" }
        var properties = object["properties"]?.objectValue ?? JSONObject()
        properties[key] = placing(part, at: tokens.dropFirst(), in: properties[key] ?? [:])
        object["properties"] = .object(properties)
        var required = object["required"]?.arrayValue ?? []
        if !required.contains(.string(key)) { required.append(.string(key)) }
        object["required"] = .array(required)
        return .object(object)
    }
}
