import JSONPatch

/// An action a page takes, with its value's type: `{"name","value"}`.
public struct WireAction: WireMessage, Hashable {
    /// The action's name (`increment`).
    public var name: String
    /// The protocol's name of the value's type: `none`, `string`, `int`, `number`, `bool`, `object`, `array` or `any`.
    public var valueType: String

    /// The names a value's type has on the wire.
    public static let valueTypeNames = ["none", "string", "int", "number", "bool", "object", "array", "any"]

    /// Creates an action description.
    /// - Parameters:
    ///   - name: the action's name.
    ///   - valueType: the protocol's name of its value's type.
    public init(name: String, valueType: String) {
        self.name = name
        self.valueType = valueType
    }

    /// `Action`.
    public static let componentName = "Action"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["name", "value"],
            "properties": [
                "name": ["type": "string"],
                "value": ["type": "string", "enum": .array(valueTypeNames.map { .string($0) })],
            ],
        ]
    }

    /// Appends `{"name":…,"value":…}`.
    public func encode(into bytes: inout [UInt8]) {
        bytes.put(#"{"name":"#)
        bytes.putString(name)
        bytes.put(#","value":"#)
        bytes.putString(valueType)
        bytes.append(UInt8(ascii: "}"))
    }

    /// Reads an action; a missing `value` is `none`.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try WireFields(json, of: "an action")
        self.init(name: try fields.string("name"), valueType: try fields.optionalString("value") ?? "none")
    }

    /// The JSON text of a list of actions, as pages carry it.
    /// - Parameter actions: the actions.
    /// - Returns: `[{"name","value"},…]`.
    public static func encodedList(_ actions: [WireAction]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendMessages(actions)
        return bytes
    }

    /// The schema of a list of actions.
    static var listSchema: JSONValue { ["type": "array", "items": schemaReference] }
}

/// The session's navigation: `{"stack","presented","forward"}`.
public struct WireNavigationState: WireMessage, Hashable {
    /// The unit names on the stack, bottom first.
    public var stack: [String]
    /// The top unit's name when it was presented (modally), otherwise `nil`.
    public var presented: String?
    /// The pages popped by `back`, kept for `forward`: unit names, nearest first.
    public var forward: [String]

    /// Creates a navigation state.
    /// - Parameters:
    ///   - stack: the unit names, bottom first.
    ///   - presented: the presented top unit, if any.
    ///   - forward: the forward list, nearest first.
    public init(stack: [String], presented: String? = nil, forward: [String] = []) {
        self.stack = stack
        self.presented = presented
        self.forward = forward
    }

    /// `NavigationState`.
    public static let componentName = "NavigationState"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["stack", "presented", "forward"],
            "properties": .object(properties),
        ]
    }

    /// The three members' schemas, which a navigation carries too.
    static var properties: JSONObject {
        [
            "stack": ["type": "array", "items": ["type": "string"]], "presented": ["type": ["string", "null"]],
            // The pages `back` popped, kept for `forward`, nearest first.
            "forward": ["type": "array", "items": ["type": "string"]],
        ]
    }

    /// Appends `{"stack":…,"presented":…,"forward":…}`.
    public func encode(into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        encodeMembers(into: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends `"stack":…,"presented":…,"forward":…` with no braces, for a navigation's own object.
    func encodeMembers(into bytes: inout [UInt8]) {
        Self.writeMembers(stack: stack, presented: presented, forward: forward, into: &bytes)
    }

    /// The most bytes ``writeMembers(stack:presented:forward:into:)`` writes.
    static func membersCapacity(stack: [String], presented: String?, forward: [String]) -> Int {
        /// An array of strings: brackets, and each string's quotes, escapes and comma.
        func arrayCapacity(_ strings: [String]) -> Int {
            strings.reduce(2) { $0 + BoundedBytes.escapedCapacity($1) + 3 }
        }
        return 40 + arrayCapacity(stack) + arrayCapacity(forward) + (presented.map(BoundedBytes.escapedCapacity) ?? 0)
    }

    /// Writes `"stack":…,"presented":…,"forward":…`: the one writer of the three members.
    static func writeMembers<Sink: JSONByteSink>(
        stack: [String], presented: String?, forward: [String], into bytes: inout Sink
    ) {
        /// `["a","b"]`.
        func writeStrings(_ strings: [String]) {
            bytes.put(UInt8(ascii: "["))
            for index in strings.indices {
                if index > strings.startIndex { bytes.put(UInt8(ascii: ",")) }
                bytes.putString(strings[index])
            }
            bytes.put(UInt8(ascii: "]"))
        }
        bytes.put(#""stack":"#)
        writeStrings(stack)
        bytes.put(#","presented":"#)
        if let presented { bytes.putString(presented) } else { bytes.put("null") }
        bytes.put(#","forward":"#)
        writeStrings(forward)
    }

    /// Reads a navigation state; a missing `forward` (a server older than the forward list) is empty.
    public init(json: JSONValue) throws(WireDecodingError) {
        try self.init(fields: WireFields(json, of: "a navigation state"))
    }

    /// Reads the three members from an object that may hold others.
    init(fields: WireFields) throws(WireDecodingError) {
        self.init(
            stack: try fields.strings("stack"), presented: try fields.optionalString("presented"),
            forward: try fields.optionalStrings("forward") ?? [])
    }
}

/// A navigation a ViewModel asked for that the server refused: `{"code","message","details"?}`.
public struct WireNavigationError: WireMessage, Hashable {
    /// The stable code (`entry_refused`, `binding_failed`, …).
    public var code: String
    /// A message for people.
    public var message: String
    /// The unit the refusal is about (`details.unit`), if any.
    public var unit: String?

    /// Creates a refusal.
    /// - Parameters:
    ///   - code: the stable code.
    ///   - message: the message for people.
    ///   - unit: the unit it is about.
    public init(code: String, message: String, unit: String? = nil) {
        self.code = code
        self.message = message
        self.unit = unit
    }

    /// `NavigationError`.
    public static let componentName = "NavigationError"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["code", "message"],
            "properties": [
                "code": ["type": "string"], "message": ["type": "string"],
                "details": ["type": "object", "properties": ["unit": ["type": "string"]]],
            ],
        ]
    }

    /// Appends `{"code":…,"message":…,"details":{"unit":…}}` (no `details` without a unit).
    public func encode(into bytes: inout [UInt8]) {
        bytes.put(#"{"code":"#)
        bytes.putString(code)
        bytes.put(#","message":"#)
        bytes.putString(message)
        if let unit {
            bytes.put(#","details":{"unit":"#)
            bytes.putString(unit)
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Reads a refusal.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try WireFields(json, of: "a navigation error")
        let details = try fields.present("details").map { details throws(WireDecodingError) in
            try WireFields(details, of: "a navigation error's details")
        }
        self.init(code: try fields.string("code"), message: try fields.string("message"), unit: try details?.optionalString("unit"))
    }
}

/// A page as it appears inside other messages: `{"unit","rev","view","actions"}`.
public struct WirePage: WireMessage, Hashable {
    /// The unit's name.
    public var unit: String
    /// The page's revision: +1 for every change of `view`.
    public var rev: Int
    /// The page's JSON document.
    public var view: JSONValue
    /// The actions the page takes.
    public var actions: [WireAction]

    /// Creates a page.
    /// - Parameters:
    ///   - unit: the unit's name.
    ///   - rev: the revision `view` is at.
    ///   - view: the document.
    ///   - actions: the actions the page takes.
    public init(unit: String, rev: Int, view: JSONValue, actions: [WireAction]) {
        self.unit = unit
        self.rev = rev
        self.view = view
        self.actions = actions
    }

    /// `Page`.
    public static let componentName = "Page"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["unit", "rev", "view", "actions"],
            "properties": ["unit": ["type": "string"], "rev": ["type": "integer"], "view": [:], "actions": WireAction.listSchema],
        ]
    }

    /// Appends `{"unit":…,"rev":…,"view":…,"actions":…}`.
    public func encode(into bytes: inout [UInt8]) {
        bytes.put(#"{"unit":"#)
        bytes.putString(unit)
        bytes.put(#","rev":"#)
        bytes.putDecimal(rev)
        bytes.put(#","view":"#)
        view.encode(into: &bytes)
        bytes.put(#","actions":"#)
        bytes.appendMessages(actions)
        bytes.append(UInt8(ascii: "}"))
    }

    /// Reads a page; any object that holds one (a snapshot) reads as its page. A missing `actions` is none.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try WireFields(json, of: "a page")
        self.init(
            unit: try fields.string("unit"), rev: try fields.int("rev"), view: try fields.value("view"),
            actions: try fields.messages("actions", as: WireAction.self))
    }
}

/// A page read's body: the page with the session, its seq and the navigation,
/// `{"session","unit","rev","seq","view","actions","navigation"}`.
public struct WireSnapshot: WireMessage, Hashable {
    /// The session's id.
    public var session: String
    /// The page.
    public var page: WirePage
    /// The session's latest event id.
    public var seq: Int
    /// The session's navigation.
    public var navigation: WireNavigationState

    /// Creates a snapshot.
    /// - Parameters:
    ///   - session: the session's id.
    ///   - page: the page.
    ///   - seq: the session's latest event id.
    ///   - navigation: the navigation.
    public init(session: String, page: WirePage, seq: Int, navigation: WireNavigationState) {
        self.session = session
        self.page = page
        self.seq = seq
        self.navigation = navigation
    }

    /// `Snapshot`.
    public static let componentName = "Snapshot"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["session", "unit", "rev", "seq", "view", "actions", "navigation"],
            "properties": [
                "session": ["type": "string"], "unit": ["type": "string"], "rev": ["type": "integer"],
                "seq": ["type": "integer"], "view": [:], "actions": WireAction.listSchema,
                "navigation": WireNavigationState.schemaReference,
            ],
        ]
    }

    /// Appends the snapshot's text.
    public func encode(into bytes: inout [UInt8]) {
        Self.write(
            session: session, unit: page.unit, rev: page.rev, seq: seq, stack: navigation.stack,
            presented: navigation.presented, forward: navigation.forward, into: &bytes,
            view: { $0.putValue(page.view) }, actions: { $0.appendMessages(page.actions) })
    }

    /// The text of a snapshot whose view and actions are already JSON text, as a server that keeps them encoded
    /// answers its page reads (the same text ``encode(into:)`` gives for their values): written once, into room
    /// sized for it.
    /// - Parameters:
    ///   - session: the session's id.
    ///   - unit: the unit's name.
    ///   - rev: the page's revision.
    ///   - seq: the session's latest event id.
    ///   - encodedView: the view's JSON text.
    ///   - encodedActions: the actions' JSON text (``WireAction/encodedList(_:)``).
    ///   - stack: the navigation's stack.
    ///   - presented: the navigation's presented unit.
    ///   - forward: the navigation's forward list.
    /// - Returns: the snapshot's JSON text.
    public static func encoded(
        session: String, unit: String, rev: Int, seq: Int, encodedView: [UInt8], encodedActions: [UInt8],
        stack: [String], presented: String?, forward: [String]
    ) -> [UInt8] {
        let capacity = 80 + BoundedBytes.escapedCapacity(session) + BoundedBytes.escapedCapacity(unit)
            + 2 * BoundedBytes.decimalCapacity + encodedView.count + encodedActions.count
            + WireNavigationState.membersCapacity(stack: stack, presented: presented, forward: forward)
        return BoundedBytes.make(capacity: capacity) { bytes in
            write(
                session: session, unit: unit, rev: rev, seq: seq, stack: stack, presented: presented,
                forward: forward, into: &bytes, view: { $0.put(encodedView) }, actions: { $0.put(encodedActions) })
        }
    }

    /// The one writer of a snapshot's members, its view and actions written by the caller.
    @inline(__always)
    private static func write<Sink: JSONByteSink>(
        session: String, unit: String, rev: Int, seq: Int, stack: [String], presented: String?, forward: [String],
        into bytes: inout Sink, view: (inout Sink) -> Void, actions: (inout Sink) -> Void
    ) {
        bytes.put(#"{"session":"#)
        bytes.putString(session)
        bytes.put(#","unit":"#)
        bytes.putString(unit)
        bytes.put(#","rev":"#)
        bytes.putDecimal(rev)
        bytes.put(#","seq":"#)
        bytes.putDecimal(seq)
        bytes.put(#","view":"#)
        view(&bytes)
        bytes.put(#","actions":"#)
        actions(&bytes)
        bytes.put(#","navigation":{"#)
        WireNavigationState.writeMembers(stack: stack, presented: presented, forward: forward, into: &bytes)
        bytes.put("}}")
    }

    /// Reads a snapshot.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try WireFields(json, of: "a snapshot")
        self.init(
            session: try fields.string("session"), page: try WirePage(json: json), seq: try fields.int("seq"),
            navigation: try fields.message("navigation", as: WireNavigationState.self))
    }
}

/// How a navigation moved the stack (`push`, `present`, `root`, `back`, `forward`); names this version does
/// not know are kept as they are.
public struct WireNavigationKind: RawRepresentable, Sendable, Hashable {
    /// The kind's name on the wire.
    public var rawValue: String

    /// Wraps a kind's name.
    /// - Parameter rawValue: the name.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The kinds this version names.
    public static let knownNames = ["push", "present", "root", "back", "forward"]
}

/// A navigation: `{"type","unit","stack","presented","forward","page"}`, the page now on top included.
public struct WireNavigation: WireMessage, Hashable {
    /// How the stack moved.
    public var kind: WireNavigationKind
    /// The unit the navigation went to (for `back`, the page now on top).
    public var unit: String
    /// The navigation state after it.
    public var state: WireNavigationState
    /// The page now on top.
    public var page: WirePage

    /// Creates a navigation.
    /// - Parameters:
    ///   - kind: how the stack moved.
    ///   - unit: the unit navigated to.
    ///   - state: the state after it.
    ///   - page: the page on top.
    public init(kind: WireNavigationKind, unit: String, state: WireNavigationState, page: WirePage) {
        self.kind = kind
        self.unit = unit
        self.state = state
        self.page = page
    }

    /// `Navigation`.
    public static let componentName = "Navigation"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        var properties = WireNavigationState.properties
        properties["type"] = ["type": "string", "enum": .array(WireNavigationKind.knownNames.map { .string($0) })]
        properties["unit"] = ["type": "string"]
        properties["page"] = WirePage.schemaReference
        return [
            "type": "object", "required": ["type", "unit", "stack", "presented", "forward", "page"],
            "properties": .object(properties),
        ]
    }

    /// Appends the navigation's text.
    public func encode(into bytes: inout [UInt8]) {
        bytes.put(#"{"type":"#)
        bytes.putString(kind.rawValue)
        bytes.put(#","unit":"#)
        bytes.putString(unit)
        bytes.append(UInt8(ascii: ","))
        state.encodeMembers(into: &bytes)
        bytes.put(#","page":"#)
        page.encode(into: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    /// Reads a navigation; a missing `unit` is the page's.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try WireFields(json, of: "a navigation")
        let page = try fields.message("page", as: WirePage.self)
        self.init(
            kind: WireNavigationKind(rawValue: try fields.string("type")), unit: try fields.optionalString("unit") ?? page.unit,
            state: try WireNavigationState(fields: fields), page: page)
    }
}
