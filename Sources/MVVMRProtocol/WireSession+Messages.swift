import JSONPatch

/// The body of every error answer: `{"error":{"code","message","details"?}}`.
public struct WireErrorBody: WireMessage, Hashable {
    /// The stable code (`unknown_session`, …).
    public var code: String
    /// A message for people.
    public var message: String
    /// Extra data (`{"allowed": […]}`), if any.
    public var details: JSONValue?

    /// Creates an error body.
    /// - Parameters:
    ///   - code: the stable code.
    ///   - message: the message for people.
    ///   - details: extra data.
    public init(code: String, message: String, details: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.details = details
    }

    /// `Error`.
    public static let componentName = "Error"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["error"],
            "properties": [
                "error": [
                    "type": "object", "required": ["code", "message"],
                    "properties": ["code": ["type": "string"], "message": ["type": "string"], "details": ["type": "object"]],
                ]
            ],
        ]
    }

    /// Appends `{"error":{"code":…,"message":…,"details":…}}` (no `details` without any).
    public func encode(into bytes: inout [UInt8]) {
        bytes.put(#"{"error":{"code":"#)
        bytes.putString(code)
        bytes.put(#","message":"#)
        bytes.putString(message)
        if let details {
            bytes.put(#","details":"#)
            details.encode(into: &bytes)
        }
        bytes.put("}}")
    }

    /// Reads an error body.
    public init(json: JSONValue) throws(WireDecodingError) {
        let error = try WireFields(try WireFields(json, of: "an error body").value("error"), of: "an error")
        self.init(code: try error.string("code"), message: try error.string("message"), details: error.present("details"))
    }
}

/// Route parameters in a body, `{"id": "7"}`: written with their names sorted, read from an object of strings
/// (absent or `null` is none).
enum WireRouteParameters {
    /// The schema: an object of strings, or null.
    static let schema: JSONValue = ["type": ["object", "null"], "additionalProperties": ["type": "string"]]

    /// Appends `{"name":"value",…}`, the names sorted so that equal parameters are equal text.
    static func encode(_ parameters: [String: String], into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, name) in parameters.keys.sorted().enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.putString(name)
            bytes.append(UInt8(ascii: ":"))
            bytes.putString(parameters[name] ?? "")
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Reads the member: none when absent or `null`, else an object whose members are all strings.
    static func decode(_ value: JSONValue?) throws(WireDecodingError) -> [String: String] {
        guard let value, !value.isNull else { return [:] }
        guard case .object(let object) = value else { throw WireDecodingError("'parameters' must be an object of strings.") }
        var parameters: [String: String] = [:]
        for (key, item) in object {
            guard case .string(let text) = item else { throw WireDecodingError("'parameters' must be an object of strings.") }
            parameters[key] = text
        }
        return parameters
    }
}

/// A request to open a session: `{"unit"?, "parameters"?}` (an empty body is `{}`).
public struct WireNewSession: WireMessage, Hashable {
    /// The unit the session starts at; the root when `nil`.
    public var unit: String?
    /// Route parameters for the first page.
    public var parameters: [String: String]

    /// Creates a request.
    /// - Parameters:
    ///   - unit: the first page's unit, or `nil` for the root.
    ///   - parameters: its route parameters.
    public init(unit: String? = nil, parameters: [String: String] = [:]) {
        self.unit = unit
        self.parameters = parameters
    }

    /// `NewSession`.
    public static let componentName = "NewSession"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        ["type": "object", "properties": ["unit": context.unitName, "parameters": WireRouteParameters.schema]]
    }

    /// Appends `{"unit":…,"parameters":{…}}`, each only when given.
    public func encode(into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        if let unit {
            bytes.put(#""unit":"#)
            bytes.putString(unit)
        }
        if !parameters.isEmpty {
            if unit != nil { bytes.append(UInt8(ascii: ",")) }
            bytes.put(#""parameters":"#)
            WireRouteParameters.encode(parameters, into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Reads a request, as the server does.
    /// - Throws: ``WireDecodingError`` with the message the server answers in `400 invalid_request`.
    public init(json: JSONValue) throws(WireDecodingError) {
        guard case .object(let fields) = json else { throw WireDecodingError("The body must be a JSON object (or empty).") }
        var unit: String?
        if let name = fields["unit"] {
            guard case .string(let unitName) = name else { throw WireDecodingError("'unit' must be a string.") }
            unit = unitName
        }
        self.init(unit: unit, parameters: try WireRouteParameters.decode(fields["parameters"]))
    }
}

/// A new session: `{"session","navigation","page","navigation_error"?}`.
public struct WireSessionCreated: WireMessage, Hashable {
    /// The snapshot of the first page, which holds the session's id and navigation.
    public var page: WireSnapshot
    /// Why the session does not start at the unit asked for (a flow-only unit), if it does not.
    public var navigationError: WireNavigationError?

    /// Creates the body.
    /// - Parameters:
    ///   - page: the first page's snapshot.
    ///   - navigationError: the refused entry, if any.
    public init(page: WireSnapshot, navigationError: WireNavigationError? = nil) {
        self.page = page
        self.navigationError = navigationError
    }

    /// `SessionCreated`.
    public static let componentName = "SessionCreated"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["session", "navigation", "page"],
            "properties": [
                "session": ["type": "string"], "navigation": WireNavigationState.schemaReference,
                "page": WireSnapshot.schemaReference,
                // A flow-only `unit` was asked for: the session starts at the root, and this says why.
                "navigation_error": WireNavigationError.schemaReference,
            ],
        ]
    }

    /// Appends the body's text.
    public func encode(into bytes: inout [UInt8]) {
        bytes.put(#"{"session":"#)
        bytes.putString(page.session)
        bytes.put(#","navigation":"#)
        page.navigation.encode(into: &bytes)
        bytes.put(#","page":"#)
        page.encode(into: &bytes)
        if let navigationError {
            bytes.put(#","navigation_error":"#)
            navigationError.encode(into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Reads the body (the session and navigation are the page's own).
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try WireFields(json, of: "a new session")
        self.init(
            page: try fields.message("page", as: WireSnapshot.self),
            navigationError: try fields.optionalMessage("navigation_error", as: WireNavigationError.self))
    }
}

/// A session as `GET /api/session` answers it: `{"session","seq","navigation","pages"}`.
public struct WireSession: WireMessage, Hashable {
    /// The session's id.
    public var session: String
    /// The session's latest event id.
    public var seq: Int
    /// The navigation.
    public var navigation: WireNavigationState
    /// Every live page, bottom of the stack first.
    public var pages: [WirePage]

    /// Creates the body.
    /// - Parameters:
    ///   - session: the session's id.
    ///   - seq: its latest event id.
    ///   - navigation: the navigation.
    ///   - pages: the live pages.
    public init(session: String, seq: Int, navigation: WireNavigationState, pages: [WirePage]) {
        self.session = session
        self.seq = seq
        self.navigation = navigation
        self.pages = pages
    }

    /// `Session`.
    public static let componentName = "Session"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["session", "seq", "navigation", "pages"],
            "properties": [
                "session": ["type": "string"], "seq": ["type": "integer"], "navigation": WireNavigationState.schemaReference,
                "pages": ["type": "array", "items": WireSnapshot.schemaReference],
            ],
        ]
    }

    /// Appends the body's text; each page is written as a snapshot.
    public func encode(into bytes: inout [UInt8]) {
        bytes.put(#"{"session":"#)
        bytes.putString(session)
        bytes.put(#","seq":"#)
        bytes.putDecimal(seq)
        bytes.put(#","navigation":"#)
        navigation.encode(into: &bytes)
        bytes.put(#","pages":["#)
        for (index, page) in pages.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            WireSnapshot(session: session, page: page, seq: seq, navigation: navigation).encode(into: &bytes)
        }
        bytes.put("]}")
    }

    /// Reads the body.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try WireFields(json, of: "a session")
        self.init(
            session: try fields.string("session"), seq: try fields.int("seq"),
            navigation: try fields.message("navigation", as: WireNavigationState.self),
            pages: try fields.requiredMessages("pages", as: WireSnapshot.self).map(\.page))
    }
}

/// A client's navigation: `{"type":"back"}`, `{"type":"forward"}` or `{"type":"open","unit","parameters"?}`.
public enum WireNavigationRequest: WireMessage, Hashable {
    /// Pop the top page.
    case back
    /// Bring back the nearest page of the forward list.
    case forward
    /// Pop back to the unit when it is on the stack, else push it (deep links).
    case open(unit: String, parameters: [String: String])

    /// `NavigationRequest`.
    public static let componentName = "NavigationRequest"

    /// `back` and `forward` read nothing but their type; `open` needs a registered unit.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "oneOf": [
                ["type": "object", "required": ["type"], "properties": ["type": ["const": "back"]]],
                ["type": "object", "required": ["type"], "properties": ["type": ["const": "forward"]]],
                [
                    "type": "object", "required": ["type", "unit"],
                    "properties": [
                        "type": ["const": "open"], "unit": context.unitName, "parameters": WireRouteParameters.schema,
                    ],
                ],
            ]
        ]
    }

    /// Appends the request's text.
    public func encode(into bytes: inout [UInt8]) {
        switch self {
        case .back: bytes.put(#"{"type":"back"}"#)
        case .forward: bytes.put(#"{"type":"forward"}"#)
        case .open(let unit, let parameters):
            bytes.put(#"{"type":"open","unit":"#)
            bytes.putString(unit)
            if !parameters.isEmpty {
                bytes.put(#","parameters":"#)
                WireRouteParameters.encode(parameters, into: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Reads a request, as the server does.
    /// - Throws: ``WireDecodingError`` with the message the server answers in `400 invalid_request`.
    public init(json: JSONValue) throws(WireDecodingError) {
        guard case .object(let fields) = json, case .string(let type)? = fields["type"] else {
            throw WireDecodingError(
                "The body must be {\"type\": \"back\"}, {\"type\": \"forward\"} or {\"type\": \"open\", \"unit\": name}.")
        }
        switch type {
        case "back":
            self = .back
        case "forward":
            self = .forward
        case "open":
            guard case .string(let unit)? = fields["unit"] else { throw WireDecodingError("'open' needs a 'unit' (a string).") }
            self = .open(unit: unit, parameters: try WireRouteParameters.decode(fields["parameters"]))
        default:
            throw WireDecodingError("'type' must be 'back', 'forward' or 'open'.")
        }
    }
}

/// A navigation's response: `{"seq","patch":[],"unit"?,"rev"?,"navigation"}`; `unit` and `rev` are the top
/// page's when something moved, and `navigation` is `null` when nothing did.
public struct WireNavigationResponse: WireMessage, Hashable {
    /// The session's latest event id.
    public var seq: Int
    /// The navigation, or `nil` when nothing moved.
    public var navigation: WireNavigation?

    /// Creates the body.
    /// - Parameters:
    ///   - seq: the session's latest event id.
    ///   - navigation: the navigation done.
    public init(seq: Int, navigation: WireNavigation?) {
        self.seq = seq
        self.navigation = navigation
    }

    /// `NavigationResponse`.
    public static let componentName = "NavigationResponse"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["seq", "navigation"],
            "properties": [
                "seq": ["type": "integer"], "unit": ["type": "string"], "rev": ["type": "integer"], "patch": ["type": "array"],
                "navigation": ["oneOf": [["type": "null"], WireNavigation.schemaReference]],
            ],
        ]
    }

    /// Appends the body's text.
    public func encode(into bytes: inout [UInt8]) {
        bytes.put(#"{"seq":"#)
        bytes.putDecimal(seq)
        bytes.put(#","patch":[]"#)
        if let navigation {
            bytes.put(#","unit":"#)
            bytes.putString(navigation.page.unit)
            bytes.put(#","rev":"#)
            bytes.putDecimal(navigation.page.rev)
            bytes.put(#","navigation":"#)
            navigation.encode(into: &bytes)
        } else {
            bytes.put(#","navigation":null"#)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Reads the body.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try WireFields(json, of: "a navigation response")
        self.init(seq: try fields.int("seq"), navigation: try fields.optionalMessage("navigation", as: WireNavigation.self))
    }
}

/// A health answer: `{"status"}`.
public enum WireStatus: String, WireMessage, CaseIterable {
    /// `/healthz`: the process answers.
    case ok
    /// `/readyz`: ready for traffic.
    case ready
    /// `/readyz` while shutting down (503).
    case draining
    /// `/readyz` while the session store cannot be reached (503).
    case storeUnavailable = "store_unavailable"

    /// `Status`.
    public static let componentName = "Status"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["status"],
            "properties": ["status": ["type": "string", "enum": .array(allCases.map { .string($0.rawValue) })]],
        ]
    }

    /// Appends `{"status":…}`.
    public func encode(into bytes: inout [UInt8]) {
        bytes.put(#"{"status":"#)
        bytes.putString(rawValue)
        bytes.append(UInt8(ascii: "}"))
    }

    /// Reads a health answer.
    public init(json: JSONValue) throws(WireDecodingError) {
        let status = try WireFields(json, of: "a status").string("status")
        guard let known = WireStatus(rawValue: status) else { throw WireDecodingError("'\(status)' is not a status") }
        self = known
    }
}

/// One unit as `GET /api/units` lists it: `{"name","route","entry","actions"}`.
public struct WireUnit: WireMessage, Hashable {
    /// The unit's name.
    public var name: String
    /// Its route pattern (`/employees/:id`).
    public var route: String
    /// How it may be entered (`deep_link`, `flow_only`).
    public var entry: String
    /// The actions its pages take.
    public var actions: [WireAction]

    /// Creates a unit's entry.
    /// - Parameters:
    ///   - name: the unit's name.
    ///   - route: its route pattern.
    ///   - entry: its entry rule's name.
    ///   - actions: its actions.
    public init(name: String, route: String, entry: String, actions: [WireAction]) {
        self.name = name
        self.route = route
        self.entry = entry
        self.actions = actions
    }

    /// `Unit`.
    public static let componentName = "Unit"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["name", "route", "entry", "actions"],
            "properties": [
                "name": ["type": "string"], "route": ["type": "string"], "entry": WireSchemaContext.oneOf(context.entryNames),
                "actions": WireAction.listSchema,
            ],
        ]
    }

    /// Appends the unit's text.
    public func encode(into bytes: inout [UInt8]) {
        bytes.put(#"{"name":"#)
        bytes.putString(name)
        bytes.put(#","route":"#)
        bytes.putString(route)
        bytes.put(#","entry":"#)
        bytes.putString(entry)
        bytes.put(#","actions":"#)
        bytes.appendMessages(actions)
        bytes.append(UInt8(ascii: "}"))
    }

    /// Reads a unit's entry.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try WireFields(json, of: "a unit")
        self.init(
            name: try fields.string("name"), route: try fields.string("route"), entry: try fields.string("entry"),
            actions: try fields.messages("actions", as: WireAction.self))
    }
}

/// The registered units: `{"root","units"}`.
public struct WireUnits: WireMessage, Hashable {
    /// The root unit's name.
    public var root: String
    /// Every unit.
    public var units: [WireUnit]

    /// Creates the list.
    /// - Parameters:
    ///   - root: the root unit's name.
    ///   - units: every unit.
    public init(root: String, units: [WireUnit]) {
        self.root = root
        self.units = units
    }

    /// `Units`.
    public static let componentName = "Units"

    /// The component's schema.
    public static func schema(in context: WireSchemaContext) -> JSONValue {
        [
            "type": "object", "required": ["root", "units"],
            "properties": ["root": ["type": "string"], "units": ["type": "array", "items": WireUnit.schemaReference]],
        ]
    }

    /// Appends the list's text.
    public func encode(into bytes: inout [UInt8]) {
        bytes.put(#"{"root":"#)
        bytes.putString(root)
        bytes.put(#","units":"#)
        bytes.appendMessages(units)
        bytes.append(UInt8(ascii: "}"))
    }

    /// Reads the list.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try WireFields(json, of: "the units")
        self.init(root: try fields.string("root"), units: try fields.requiredMessages("units", as: WireUnit.self))
    }
}
