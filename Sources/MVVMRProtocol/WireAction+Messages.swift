import JSONPatch

/// An action request's body: `{"action": name, "value": any, "rev": n}`.
public struct WireActionRequest: WireMessage, Hashable {
    /// The action's name.
    public var action: String
    /// The action's value; `null` when the body had none.
    public var value: JSONValue
    /// The revision the client holds, when it names one.
    public var rev: Int?

    /// The largest magnitude a revision written as a JSON double may have: 2^53, below which every whole
    /// number is exactly a double, so `2251799813685248.0` is the revision it spells and not a neighbour.
    public static let largestExactRevision: Double = 9_007_199_254_740_992

    /// Creates a request.
    /// - Parameters:
    ///   - action: the action's name.
    ///   - value: its value.
    ///   - rev: the revision the client holds.
    public init(action: String, value: JSONValue = .null, rev: Int? = nil) {
        self.action = action
        self.value = value
        self.rev = rev
    }

    /// `ActionRequest`.
    public static let componentName = "ActionRequest"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["action"],
            "properties": ["action": ["type": "string"], "value": [:], "rev": revisionSchema],
        ]
    }

    /// The rev a client holds; null is taken as absent (no rev named), as clients that always send the field need.
    public static let revisionSchema: JSONValue = ["type": ["integer", "null"], "minimum": 0, "maximum": .int(Int.max)]

    /// Appends `{"action":…,"value":…,"rev":…}` (no `rev` when none is held).
    public func encode(into bytes: inout [UInt8]) {
        bytes.put(#"{"action":"#)
        bytes.putString(action)
        bytes.put(#","value":"#)
        value.encode(into: &bytes)
        if let rev {
            bytes.put(#","rev":"#)
            bytes.putDecimal(rev)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Reads a request, as the server does: an object with a string `action`; `value` absent is `null`; `rev`
    /// absent, `null` or a non-negative whole number (``revision(_:)``).
    /// - Throws: ``WireDecodingError`` with the message the server answers in `400 invalid_request`.
    public init(json: JSONValue) throws(WireDecodingError) {
        guard case .object(let fields) = json else {
            throw WireDecodingError("The body must be a JSON object with an 'action'.")
        }
        try self.init(members: fields["action"], fields["value"], fields["rev"])
    }

    /// A request from a body's `action`, `value` and `rev` members, each nil when absent: the one reading of them
    /// that both ways of reading a body share, so that they give the same request and the same errors.
    private init(members action: JSONValue?, _ value: JSONValue?, _ rev: JSONValue?) throws(WireDecodingError) {
        guard case .string(let name)? = action else { throw WireDecodingError("'action' (a string) is required.") }
        self.init(action: name, value: value ?? .null, rev: try Self.revision(rev))
    }

    /// Reads a request straight from its body's bytes when the body is one object of scalar members (as a client's
    /// `{"action":"increment","value":1}` is), without building the object; the same request, and the same errors,
    /// as ``init(json:)`` on the parsed body.
    /// - Parameter bytes: the body, UTF-8 JSON text.
    /// - Returns: the request; `nil` when the body is anything else (a value that is an array or an object, text that
    ///   is not JSON), which is then to be parsed whole and read with ``init(json:)``.
    /// - Throws: ``WireDecodingError`` with the message the server answers in `400 invalid_request`.
    public init?(scalarMembersOf bytes: [UInt8]) throws(WireDecodingError) {
        var action: JSONValue?
        var value: JSONValue?
        var rev: JSONValue?
        // A later duplicate replaces an earlier one, as in a parsed object.
        let isRead = JSONValue.readScalarMembers(of: bytes) { key, member in
            if JSONValue.isKey(key, "action") {
                action = member
            } else if JSONValue.isKey(key, "value") {
                value = member
            } else if JSONValue.isKey(key, "rev") {
                rev = member
            }
        }
        guard isRead else { return nil }
        try self.init(members: action, value, rev)
    }

    /// Reads an action body's `rev`: absent or `null` is none; an integer, or a double that is a whole number
    /// within ±2^53 (so exactly the number it was written as), is the revision.
    /// - Parameter field: the `rev` member, if the body had one.
    /// - Returns: the revision, or `nil` for none.
    /// - Throws: ``WireDecodingError`` for a non-number, a fraction, a double beyond ±2^53, or a negative number.
    public static func revision(_ field: JSONValue?) throws(WireDecodingError) -> Int? {
        let revision: Int
        switch field {
        case nil, .null?:
            return nil
        case .int(let value)?:
            revision = value
        case .double(let value)? where value >= -largestExactRevision && value <= largestExactRevision:
            // Within ±2^53 the truncation is exact, so comparing it back tells whole numbers from fractions.
            let truncated = Int(value)
            guard Double(truncated) == value else { throw WireDecodingError("'rev' must be a whole number.") }
            revision = truncated
        default:
            throw WireDecodingError("'rev' must be a whole number.")
        }
        guard revision >= 0 else { throw WireDecodingError("'rev' must not be negative.") }
        return revision
    }
}

/// What an action changed in its page: a patch from the rev the client held, a snapshot when the patch could
/// not be made from it, or nothing.
public enum WirePageChange: Sendable, Hashable {
    /// The patch from the client's rev (or the one before) to the page's rev.
    case patch(JSONPatch)
    /// The whole page.
    case snapshot(WirePage)
    /// No change is carried.
    case none
}

/// An action's response: `{"unit","rev","seq","patch"|"snapshot","navigation","navigation_error"?}`.
public struct WireActionResponse: WireMessage, Hashable {
    /// The unit acted on.
    public var unit: String
    /// The page's revision after the action.
    public var rev: Int
    /// The session's latest event id when the answer was built.
    public var seq: Int
    /// What the action changed in the page.
    public var change: WirePageChange
    /// The navigation the action caused, if any.
    public var navigation: WireNavigation?
    /// The navigation the ViewModel asked for that could not be done, if any.
    public var navigationError: WireNavigationError?

    /// Creates a response.
    /// - Parameters:
    ///   - unit: the unit acted on.
    ///   - rev: the revision after the action.
    ///   - seq: the session's latest event id.
    ///   - change: the page's patch or snapshot.
    ///   - navigation: the navigation caused.
    ///   - navigationError: the navigation refused.
    public init(
        unit: String, rev: Int, seq: Int, change: WirePageChange, navigation: WireNavigation? = nil,
        navigationError: WireNavigationError? = nil
    ) {
        self.unit = unit
        self.rev = rev
        self.seq = seq
        self.change = change
        self.navigation = navigation
        self.navigationError = navigationError
    }

    /// `ActionResponse`.
    public static let componentName = "ActionResponse"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["unit", "rev", "seq", "navigation"],
            "properties": [
                "unit": ["type": "string"], "rev": ["type": "integer"], "seq": ["type": "integer"],
                "patch": WirePatchOperation.patchSchema, "snapshot": WirePage.schemaReference,
                "navigation": ["oneOf": [["type": "null"], WireNavigation.schemaReference]],
                // The ViewModel routed, but the page it routed to could not be built.
                "navigation_error": WireNavigationError.schemaReference,
            ],
        ]
    }

    /// Appends the response's text.
    public func encode(into bytes: inout [UInt8]) {
        Self.writeHead(unit: unit, rev: rev, seq: seq, into: &bytes)
        switch change {
        case .patch(let patch):
            bytes.put(#","patch":"#)
            patch.encode(into: &bytes)
        case .snapshot(let page):
            bytes.put(#","snapshot":"#)
            page.encode(into: &bytes)
        case .none:
            break
        }
        bytes.put(#","navigation":"#)
        if let navigation { navigation.encode(into: &bytes) } else { bytes.put("null") }
        if let navigationError {
            bytes.put(#","navigation_error":"#)
            navigationError.encode(into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// `{"unit":…,"rev":…,"seq":…`: how every response begins (at most 24 bytes, and the unit's and the numbers'
    /// texts).
    private static func writeHead<Sink: JSONByteSink>(unit: String, rev: Int, seq: Int, into bytes: inout Sink) {
        bytes.put(#"{"unit":"#)
        bytes.putString(unit)
        bytes.put(#","rev":"#)
        bytes.putDecimal(rev)
        bytes.put(#","seq":"#)
        bytes.putDecimal(seq)
    }

    /// The text of the most frequent response, a patch with no navigation, written without making the message
    /// first: the same text as `WireActionResponse(unit:rev:seq:change: .patch(patch)).jsonBytes`.
    /// - Parameters:
    ///   - unit: the unit acted on.
    ///   - rev: the revision after the action.
    ///   - seq: the session's latest event id.
    ///   - patch: the page's patch.
    /// - Returns: the response's bytes.
    public static func patchBytes(unit: String, rev: Int, seq: Int, patch: JSONPatch) -> [UInt8] {
        // Written into room sized for it (every string counted at its longest escape), in one allocation.
        let capacity = 64 + BoundedBytes.escapedCapacity(unit) + 2 * BoundedBytes.decimalCapacity
            + patch.encodedCapacity
        return BoundedBytes.make(capacity: capacity) { bytes in
            writeHead(unit: unit, rev: rev, seq: seq, into: &bytes)
            bytes.put(#","patch":"#)
            bytes.putPatch(patch)
            bytes.put(#","navigation":null}"#)
        }
    }

    /// The response's text, sized for its patch.
    public var jsonBytes: [UInt8] {
        var bytes: [UInt8] = []
        if case .patch(let patch) = change { bytes.reserveCapacity(96 + 64 * patch.count) } else { bytes.reserveCapacity(256) }
        encode(into: &bytes)
        return bytes
    }

    /// Reads a response; a patch wins over a snapshot if a body had both.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try WireFields(json, of: "an action response")
        let change: WirePageChange
        if fields.present("patch") != nil {
            change = .patch(try fields.patch("patch"))
        } else if let page = try fields.optionalMessage("snapshot", as: WirePage.self) {
            change = .snapshot(page)
        } else {
            change = .none
        }
        self.init(
            unit: try fields.string("unit"), rev: try fields.int("rev"), seq: try fields.int("seq"), change: change,
            navigation: try fields.optionalMessage("navigation", as: WireNavigation.self),
            navigationError: try fields.optionalMessage("navigation_error", as: WireNavigationError.self))
    }
}
