import JSONPatch

/// A part of the page protocol (docs/PROTOCOL.md) that the OpenAPI document describes as a component.
public protocol WireComponent {
    /// The name of the message's component in `/api/openapi.json` (`#/components/schemas/<name>`).
    static var componentName: String { get }
    /// The message's JSON Schema, the component itself.
    /// - Parameter context: what the schema depends on in one server (its unit names).
    static func schema(in context: WireSchemaContext) -> JSONValue
}

/// A JSON message of the page protocol: one encoder to bytes, one decoder from JSON, and the schema of its
/// component, kept together so that the server, the Swift client and `/api/openapi.json` all use the same
/// declaration.
public protocol WireMessage: WireComponent, Sendable, Equatable {
    /// Appends the message's compact JSON text (no insignificant whitespace, members in the documented order).
    /// - Parameter bytes: the buffer the text is appended to.
    func encode(into bytes: inout [UInt8])

    /// Reads the message from parsed JSON. Members the message does not know are ignored, so a newer peer can
    /// add some.
    /// - Parameter json: the message as JSON.
    /// - Throws: ``WireDecodingError`` naming the member that is missing or of the wrong type.
    init(json: JSONValue) throws(WireDecodingError)
}

extension WireComponent {
    /// `{"$ref": "#/components/schemas/<componentName>"}`.
    public static var schemaReference: JSONValue {
        ["$ref": .string("#/components/schemas/\(componentName)")]
    }
}

extension WireMessage {
    /// The message's compact JSON text as UTF-8 bytes.
    public var jsonBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        encode(into: &bytes)
        return bytes
    }

    /// Reads the message from JSON text.
    /// - Parameters:
    ///   - bytes: the UTF-8 text.
    ///   - maxDepth: the deepest nesting the parser takes.
    /// - Throws: ``WireDecodingError`` when the text is not JSON or not the message.
    public init(parsing bytes: some Collection<UInt8>, maxDepth: Int = 512) throws(WireDecodingError) {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: bytes, maxDepth: maxDepth)
        } catch {
            throw WireDecodingError("the body is not JSON (\(error))")
        }
        try self.init(json: json)
    }
}

/// Why JSON is not the message it was read as: a message for people naming the member and what it must be.
public struct WireDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, e.g. `a page needs 'rev' (an integer)`.
    public let message: String

    /// Creates an error.
    /// - Parameter message: what is wrong.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// What a server's schemas depend on: the units it serves.
public struct WireSchemaContext: Sendable, Hashable {
    /// The registered units' names, listed as the values a request may name.
    public var unitNames: [String]
    /// The names of the rules by which a unit may be entered (`deep_link`, `flow_only`).
    public var entryNames: [String]

    /// Creates a context.
    /// - Parameters:
    ///   - unitNames: the registered units' names (no list: any string).
    ///   - entryNames: the entry rules' names (no list: any string).
    public init(unitNames: [String] = [], entryNames: [String] = []) {
        self.unitNames = unitNames
        self.entryNames = entryNames
    }

    /// A string that is one of `names`, or any string when the list is empty.
    static func oneOf(_ names: [String]) -> JSONValue {
        names.isEmpty ? ["type": "string"] : ["type": "string", "enum": .array(names.map { .string($0) })]
    }

    /// A unit's name: one of the server's.
    var unitName: JSONValue { Self.oneOf(unitNames) }
}

/// Every component of the protocol's messages, by name, for the OpenAPI document.
public enum WireComponents {
    /// The components' types, in the order the document lists them.
    public static var all: [any WireComponent.Type] {
        [
            WireAction.self, WireNavigationState.self, WireNavigationError.self, WirePage.self, WireSnapshot.self,
            WireNavigation.self, WireActionRequest.self, WireActionResponse.self, WirePatchEvent.self,
            WireExpiredEvent.self, WireEvent.self, WireErrorBody.self, WireNewSession.self, WireSessionCreated.self,
            WireSession.self, WireNavigationRequest.self, WireNavigationResponse.self, WireStatus.self, WireUnit.self,
            WireUnits.self, WirePatchOperation.self,
        ]
    }

    /// The schemas of every component.
    /// - Parameter context: the server's units.
    /// - Returns: the schemas by component name.
    public static func schemas(in context: WireSchemaContext) -> JSONObject {
        var schemas = JSONObject()
        for component in all { schemas[component.componentName] = component.schema(in: context) }
        return schemas
    }
}

/// An RFC 6902 operation as the protocol's patches carry it; `JSONPatch` encodes and decodes it.
public enum WirePatchOperation: WireComponent {
    /// `PatchOperation`.
    public static let componentName = "PatchOperation"

    /// An object with `op` and `path`, and `from` or `value` as the operation needs.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["op", "path"],
            "properties": [
                "op": ["type": "string", "enum": ["add", "remove", "replace", "move", "copy", "test"]],
                "path": ["type": "string"], "from": ["type": "string"], "value": [:],
            ],
        ]
    }

    /// An array of operations.
    static var patchSchema: JSONValue { ["type": "array", "items": schemaReference] }
}
