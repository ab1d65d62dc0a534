import JSONPatch

/// A patch event's data: `{"unit","rev","patch"}`, the patch from `rev - 1` to `rev`.
public struct WirePatchEvent: WireMessage, Hashable {
    /// The page's unit.
    public var unit: String
    /// The page's revision after the patch.
    public var rev: Int
    /// The patch.
    public var patch: JSONPatch

    /// Creates a patch event.
    /// - Parameters:
    ///   - unit: the page's unit.
    ///   - rev: the revision after the patch.
    ///   - patch: the patch.
    public init(unit: String, rev: Int, patch: JSONPatch) {
        self.unit = unit
        self.rev = rev
        self.patch = patch
    }

    /// `PatchEvent`.
    public static let componentName = "PatchEvent"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["unit", "rev", "patch"],
            "properties": ["unit": ["type": "string"], "rev": ["type": "integer"], "patch": WirePatchOperation.patchSchema],
        ]
    }

    /// Appends `{"unit":…,"rev":…,"patch":[…]}`.
    public func encode(into bytes: inout [UInt8]) {
        write(into: &bytes)
    }

    /// The most bytes the event's data takes.
    public var encodedCapacity: Int {
        32 + BoundedBytes.escapedCapacity(unit) + BoundedBytes.decimalCapacity + patch.encodedCapacity
    }

    /// The event's one writer (a patch's SSE frame calls it too).
    fileprivate func write<Sink: JSONByteSink>(into bytes: inout Sink) {
        bytes.put(#"{"unit":"#)
        bytes.putString(unit)
        bytes.put(#","rev":"#)
        bytes.putDecimal(rev)
        bytes.put(#","patch":"#)
        bytes.putPatch(patch)
        bytes.put(UInt8(ascii: "}"))
    }

    /// Reads a patch event.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try WireFields(json, of: "a patch event")
        self.init(unit: try fields.string("unit"), rev: try fields.int("rev"), patch: try fields.patch("patch"))
    }
}

/// The data of the event that ends a session's stream: `{"reason"}`.
public struct WireExpiredEvent: WireMessage, Hashable {
    /// Why the session ended: `deleted`, `expired` or `evicted`.
    public var reason: String

    /// The reasons this version names.
    public static let knownReasons = ["deleted", "expired", "evicted"]

    /// Creates the event.
    /// - Parameter reason: why the session ended.
    public init(reason: String) {
        self.reason = reason
    }

    /// `ExpiredEvent`.
    public static let componentName = "ExpiredEvent"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["reason"],
            "properties": ["reason": ["enum": .array(knownReasons.map { .string($0) })]],
        ]
    }

    /// Appends `{"reason":…}`.
    public func encode(into bytes: inout [UInt8]) {
        bytes.put(#"{"reason":"#)
        bytes.putString(reason)
        bytes.append(UInt8(ascii: "}"))
    }

    /// Reads the event.
    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(reason: try WireFields(json, of: "an expired event").string("reason"))
    }
}

/// One Server-Sent Event of a session's stream: its name and its data, one message.
public enum WireEvent: WireComponent, Sendable, Hashable {
    /// `patch`: a page's patch.
    case patch(WirePatchEvent)
    /// `navigate`: a navigation, with the page now on top.
    case navigate(WireNavigation)
    /// `snapshot`: a page whose patches the client cannot have (a resume beyond the event log).
    case snapshot(WirePage)
    /// `expired`: the session ended; the stream closes. It carries no id.
    case expired(WireExpiredEvent)

    /// The event's name (the `event:` field).
    public var name: String {
        switch self {
        case .patch: "patch"
        case .navigate: "navigate"
        case .snapshot: "snapshot"
        case .expired: "expired"
        }
    }

    /// Appends the event's data, one line of JSON.
    /// - Parameter bytes: the buffer.
    public func encodeData(into bytes: inout [UInt8]) {
        switch self {
        case .patch(let event): event.encode(into: &bytes)
        case .navigate(let navigation): navigation.encode(into: &bytes)
        case .snapshot(let page): page.encode(into: &bytes)
        case .expired(let event): event.encode(into: &bytes)
        }
    }

    /// The event as an SSE frame: `id: N\nevent: NAME\ndata: JSON\n\n` (the JSON is one line: the encoder never
    /// writes a newline).
    /// - Parameter sequence: the event's seq (its `id`), or `nil` for none.
    /// - Returns: the frame's bytes.
    public func frame(sequence: Int?) -> [UInt8] {
        // A patch (nearly every event) is written into room sized for it, in one allocation.
        if case .patch(let event) = self {
            return BoundedBytes.make(capacity: 40 + BoundedBytes.decimalCapacity + event.encodedCapacity) { bytes in
                writeFrameHead(sequence: sequence, into: &bytes)
                event.write(into: &bytes)
                bytes.put("\n\n")
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        writeFrameHead(sequence: sequence, into: &bytes)
        encodeData(into: &bytes)
        bytes.put("\n\n")
        return bytes
    }

    /// `id: N\nevent: NAME\ndata: ` (at most 40 bytes and the id's digits).
    private func writeFrameHead<Sink: JSONByteSink>(sequence: Int?, into bytes: inout Sink) {
        if let sequence {
            bytes.put("id: ")
            bytes.putDecimal(sequence)
            bytes.put(UInt8(ascii: "\n"))
        }
        bytes.put("event: ")
        switch self {
        case .patch: bytes.put("patch")
        case .navigate: bytes.put("navigate")
        case .snapshot: bytes.put("snapshot")
        case .expired: bytes.put("expired")
        }
        bytes.put("\ndata: ")
    }

    /// Reads an event from its name and its data's text.
    /// - Parameters:
    ///   - name: the `event:` field.
    ///   - data: the `data:` field's text.
    /// - Returns: the event, or `nil` for a name this version does not know (a client skips it).
    /// - Throws: ``WireDecodingError`` when a known event's data is not its message.
    public static func decode(name: String, data: some Collection<UInt8>) throws(WireDecodingError) -> WireEvent? {
        switch name {
        case "patch": .patch(try WirePatchEvent(parsing: data))
        case "navigate": .navigate(try WireNavigation(parsing: data))
        case "snapshot": .snapshot(try WirePage(parsing: data))
        case "expired": .expired(try WireExpiredEvent(parsing: data))
        default: nil
        }
    }

    /// `Event`.
    public static let componentName = "Event"

    /// One event of the stream (OpenAPI 3.1: a `text/event-stream` schema describes each event): its `data` is
    /// the JSON text of its message; every event but `expired` carries its seq as `id`.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "oneOf": [
                eventSchema("patch", payload: WirePatchEvent.schemaReference),
                eventSchema("navigate", payload: WireNavigation.schemaReference),
                eventSchema("snapshot", payload: WirePage.schemaReference),
                eventSchema("expired", payload: WireExpiredEvent.schemaReference, hasIdentifier: false),
            ]
        ]
    }

    private static func eventSchema(_ type: String, payload: JSONValue, hasIdentifier: Bool = true) -> JSONValue {
        var properties: JSONObject = [
            "event": ["const": .string(type)],
            "data": ["type": "string", "contentMediaType": "application/json", "contentSchema": payload],
        ]
        if hasIdentifier { properties["id"] = ["type": "string", "pattern": "^[0-9]+$"] }
        return [
            "type": "object", "required": .array(hasIdentifier ? ["event", "data", "id"] : ["event", "data"]),
            "properties": .object(properties),
        ]
    }
}
