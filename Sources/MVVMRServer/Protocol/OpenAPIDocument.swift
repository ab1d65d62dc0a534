import JSONPatch
import MVVMR
import MVVMRProtocol

/// The OpenAPI 3.1 description of the page protocol, with each unit's actions and their value types.
///
/// scripts/check-api-schema.sh holds the server to it with schemathesis: every status, content type and body the
/// server answers must be listed here, and every request this document calls invalid must be refused.
enum OpenAPIDocument {
    /// The document for the registered units.
    /// - Parameters:
    ///   - registry: the units, their actions and value types.
    ///   - maxIdempotencyKeyBytes: the longest `Idempotency-Key` the server takes (`MAX_IDEMPOTENCY_KEY_BYTES`).
    static func make(registry: UnitRegistry, maxIdempotencyKeyBytes: Int = 255) -> JSONValue {
        var paths = JSONObject()
        let unitNames: JSONValue = .array(registry.units.map { .string($0.name) })
        // Each unit's view and action requests, as `<Unit>View` and `<Unit>Actions`, beside the protocol's own.
        var components = WireComponents.schemas(
            in: WireSchemaContext(
                unitNames: registry.units.map(\.name), entryNames: UnitEntry.allCases.map(\.rawValue)))
        components["SessionLog"] = sessionLogSchema
        let stems = componentStems(of: registry.units, taken: Set(components.keys))
        for unit in registry.units {
            let stem = stems[unit.name] ?? unit.name
            components[stem + "View"] = viewComponent(of: unit)
            components[stem + "Actions"] = actionsComponent(of: unit)
        }
        let sessionHeader: JSONValue = [
            "name": "X-Session-ID", "in": "header", "required": false,
            "description": "The session id (the `mvvmr_session` cookie works too; the header wins).",
            "schema": ["type": "string"],
        ]
        let unitParameter: JSONValue = [
            "name": "unit", "in": "path", "required": true,
            "schema": ["type": "string", "enum": unitNames],
        ]
        let idempotencyKeyHeader: JSONValue = [
            "name": "Idempotency-Key", "in": "header", "required": false,
            "description":
                "Makes the action exactly-once: a repeat with the same key, unit and body replays the first response. At most \(maxIdempotencyKeyBytes) bytes of UTF-8 (`maxLength` counts characters: the same for ASCII keys); longer is 400 `invalid_idempotency_key`.",
            "schema": ["type": "string", "maxLength": .int(maxIdempotencyKeyBytes)],
        ]
        func errors(_ statuses: [String]) -> JSONObject {
            var responses = JSONObject()
            for status in statuses {
                responses[status] = [
                    "description": .string(
                        errorDescriptions[status] ?? "An error (see docs/PROTOCOL.md for the codes)."),
                    "content": ["application/json": ["schema": ["$ref": "#/components/schemas/Error"]]],
                ]
            }
            return responses
        }
        // 400 `malformed_request` can answer any request (MicroHTTP refuses it before routing), and 413
        // `payload_too_large` any request with a body; 500 is a page whose ViewModel failed while it was bound
        // (`binding_failed`, `missing_service`), wherever a request binds one (an action can navigate).
        let actionErrors = errors(["400", "403", "404", "409", "413", "422", "429", "500", "503"])
        func jsonResponse(_ description: String, _ schema: String) -> JSONValue {
            [
                "description": .string(description),
                "content": ["application/json": ["schema": ["$ref": .string("#/components/schemas/\(schema)")]]],
            ]
        }
        func merged(_ first: JSONObject, _ second: JSONObject) -> JSONObject {
            var result = first
            for (key, value) in second { result[key] = value }
            return result
        }
        func operation(
            _ summary: String, _ id: String, parameters: [JSONValue] = [], body: JSONValue? = nil, responses: JSONObject
        ) -> JSONValue {
            // Any request's head may be over the header limit: MicroHTTP answers 414 or 431 before routing.
            var object: JSONObject = [
                "summary": .string(summary), "operationId": .string(id),
                "responses": .object(merged(responses, errors(["414", "431"]))),
            ]
            if !parameters.isEmpty { object["parameters"] = .array(parameters) }
            if let body { object["requestBody"] = body }
            return .object(object)
        }

        paths["/api/units"] = [
            "get": operation(
                "The registered units and the root.", "listUnits",
                responses: merged(["200": jsonResponse("The units.", "Units")], errors(["400"])))
        ]
        paths["/api/sessions"] = [
            "post": operation(
                "Open a session with the root unit (or `unit`) bound; a flow-only `unit` starts at the root, with "
                    + "`navigation_error` `entry_refused`.", "createSession",
                body: [
                    "required": false,
                    "content": ["application/json": ["schema": ["$ref": "#/components/schemas/NewSession"]]],
                ],
                responses: merged(
                    ["201": jsonResponse("The new session.", "SessionCreated")],
                    errors(["400", "403", "404", "413", "429", "500", "503"])))
        ]
        paths["/api/session"] = [
            "get": operation(
                "The session: navigation and every live page.", "getSession", parameters: [sessionHeader],
                responses: merged(["200": jsonResponse("The session.", "Session")], errors(["400", "404", "503"]))),
            "delete": operation(
                "End the session.", "deleteSession", parameters: [sessionHeader],
                responses: merged(["204": ["description": "Ended."]], errors(["400", "403", "404"]))),
        ]
        paths["/api/pages/{unit}"] = [
            "get": operation(
                "A page's snapshot, binding it first if needed (creates a session when none is sent); a flow-only unit "
                    + "that is not bound in the session is 403 `entry_refused`.", "getPage",
                parameters: [unitParameter, sessionHeader],
                responses: merged(
                    ["200": jsonResponse("The page.", "Snapshot")],
                    errors(["400", "403", "404", "413", "429", "500", "503"])))
        ]
        paths["/api/pages/{unit}/actions"] = [
            "post": operation(
                "Deliver one action to the page's Input (each unit's own operation below lists its actions; a name "
                    + "the unit lacks is 422 `unknown_action`).", "performAction",
                parameters: [unitParameter, sessionHeader, idempotencyKeyHeader],
                body: [
                    "required": true,
                    "content": ["application/json": ["schema": ["$ref": "#/components/schemas/ActionRequest"]]],
                ],
                responses: merged(["200": jsonResponse("What the action changed.", "ActionResponse")], actionErrors))
        ]
        for unit in registry.units where !unit.actions.isEmpty {
            let actionsComponent = "#/components/schemas/\(stems[unit.name] ?? unit.name)Actions"
            paths["/api/pages/\(unit.name)/actions"] = [
                "post": operation(
                    "Deliver one action to the `\(unit.name)` page.",
                    "perform_\(unit.name.replacingNonIdentifierCharacters)",
                    parameters: [sessionHeader, idempotencyKeyHeader],
                    body: [
                        "required": true,
                        "content": ["application/json": ["schema": ["$ref": .string(actionsComponent)]]],
                    ],
                    responses: merged(["200": jsonResponse("What the action changed.", "ActionResponse")], actionErrors)
                )
            ]
        }
        paths["/api/navigation"] = [
            "post": operation(
                "Client-initiated navigation: back, forward, or open a unit.", "navigate", parameters: [sessionHeader],
                body: [
                    "required": true,
                    "content": ["application/json": ["schema": ["$ref": "#/components/schemas/NavigationRequest"]]],
                ],
                responses: merged(
                    ["200": jsonResponse("The navigation.", "NavigationResponse")],
                    errors(["400", "403", "404", "409", "413", "500", "503"])))
        ]
        paths["/api/session/log"] = [
            "get": operation(
                "The session's stored input records (docs/PROTOCOL.md, \"Session logs\"): what PageTester replays.",
                "getSessionLog", parameters: [sessionHeader],
                responses: merged(
                    ["200": jsonResponse("The session's log.", "SessionLog")], errors(["400", "403", "404", "503"])))
        ]
        paths["/api/events"] = [
            "get": operation(
                "Server-Sent Events: every event of the session (patch, navigate, snapshot, expired).", "events",
                parameters: [
                    sessionHeader,
                    ["name": "Last-Event-ID", "in": "header", "required": false, "schema": eventIdentifierSchema],
                    ["name": "lastEventId", "in": "query", "required": false, "schema": eventIdentifierSchema],
                    [
                        "name": "session", "in": "query", "required": false,
                        "description":
                            "The session id, for clients that cannot set headers (a browser's EventSource) and keep one session per tab. `X-Session-ID` wins over it; it wins over the cookie.",
                        "schema": ["type": "string"],
                    ],
                ],
                responses: merged(
                    [
                        "200": [
                            "description": "The event stream.",
                            "content": ["text/event-stream": ["schema": ["$ref": "#/components/schemas/Event"]]],
                        ]
                    ],
                    errors(["400", "404", "413", "429", "503"])))
        ]
        paths["/api/openapi.json"] = [
            "get": operation(
                "This document.", "openAPI",
                responses: merged(
                    [
                        "200": [
                            "description": "OpenAPI 3.1.",
                            "content": ["application/json": ["schema": ["type": "object"]]],
                        ]
                    ], errors(["400"])))
        ]
        paths["/healthz"] = [
            "get": operation(
                "Liveness.", "health", responses: merged(["200": jsonResponse("Alive.", "Status")], errors(["400"])))
        ]
        paths["/readyz"] = [
            "get": operation(
                "Readiness.", "ready",
                responses: merged(
                    [
                        "200": jsonResponse("Ready.", "Status"),
                        "503": jsonResponse("Draining, or the session store cannot be reached (`store_unavailable`).", "Status"),
                    ],
                    errors(["400"])))
        ]
        paths["/metrics"] = [
            "get": operation(
                "Prometheus metrics.", "metrics",
                responses: merged(
                    [
                        "200": [
                            "description": "Text exposition format.",
                            "content": ["text/plain": ["schema": ["type": "string"]]],
                        ]
                    ], errors(["400"])))
        ]

        return [
            "openapi": "3.1.0",
            "info": [
                "title": "MVVMR page protocol", "version": "1",
                "description":
                    "Pages as JSON view-models; actions answered with RFC 6902 JSON Patches; Server-Sent Events.",
            ],
            "paths": .object(paths),
            "components": ["schemas": .object(components)],
        ]
    }

    /// What each error status means here, by its codes (docs/PROTOCOL.md and docs/HTTP.md say when each comes).
    private static let errorDescriptions: [String: String] = [
        "400": "`invalid_json`, `invalid_request`, `invalid_idempotency_key`, `malformed_request` or `invalid_path`.",
        "403":
            "`forbidden_origin`: a state-changing request from an origin not allowed; `entry_refused`: a deep link "
            + "to a flow-only unit (`details.unit`).",
        "404": "`unknown_session`, `unknown_unit` or `not_found`.",
        "409":
            "`page_not_bound`: the unit has no live page in this session, or its page waits in the forward list; "
            + "`nothing_forward`: a `forward` navigation with an empty forward list.",
        "413": "`payload_too_large`, `value_too_large` or `session_too_large`.",
        "422":
            "`unknown_action` (`details.allowed` lists the actions), `invalid_value` or `idempotency_key_reused`.",
        "414": "`uri_too_long`: the request target alone is over `MAX_HEADER_BYTES`; the connection closes.",
        "429":
            "`rate_limited` (with `Retry-After`), `idempotency_cache_full`, `too_many_streams` or `too_many_streams_from_address`.",
        "431": "`header_fields_too_large`: the header section is over `MAX_HEADER_BYTES`; the connection closes.",
        "500":
            "`internal_error`; `details.reason` says why a page was not built (`binding_failed`, `missing_service`).",
        "503":
            "`overloaded`, `draining`, `stream_capacity_reached`, `stream_not_served` or `store_unavailable` (the session store could not keep "
            + "the input, which was not applied), with `Retry-After`.",
    ]

    private static func valueSchema(_ type: ActionValueType) -> JSONValue {
        switch type {
        case .none: ["type": "null"]
        case .string: ["type": "string"]
        // Action values are Swift `Int`s: a whole number outside Int64 is refused (422 `invalid_value`).
        case .int: ["type": "integer", "minimum": .int(Int.min), "maximum": .int(Int.max)]
        case .number: ["type": "number"]
        case .bool: ["type": "boolean"]
        case .object: ["type": "object"]
        case .array: ["type": "array"]
        case .any: [:]
        }
    }

    /// What the server takes as the value of `action`: a value of its JSON type (``valueSchema(_:)``), and for a
    /// value of a `Decodable` type also one its derived schema describes (a value that does not decode is 422
    /// `invalid_value`; a type that cannot be described adds nothing to its JSON type). An integer keeps the bounds of
    /// Swift's `Int`, which the derived schema does not state.
    private static func valueSchema(of action: ActionDescriptor) -> JSONValue {
        let typeSchema = valueSchema(action.valueType)
        guard let derived = action.schema?.objectValue, !derived.isEmpty else { return typeSchema }
        guard let typeObject = typeSchema.objectValue, derived["type"] == typeObject["type"] else {
            return ["allOf": [typeSchema, .object(derived)]]
        }
        var merged = derived
        for (key, value) in typeObject where merged[key] == nil { merged[key] = value }
        return .object(merged)
    }

    private static func actionSchema(_ action: ActionDescriptor) -> JSONValue {
        [
            "type": "object",
            "required": .array(action.valueType == .none || action.valueType == .any ? ["action"] : ["action", "value"]),
            "properties": [
                "action": ["const": .string(action.name)],
                "value": valueSchema(of: action),
                "rev": WireActionRequest.revisionSchema,
            ],
        ]
    }

    /// The stem of each unit's component names (`<stem>View`, `<stem>Actions`), by unit name: the name with its
    /// first letter upper-cased, and any character a component name may not hold (`^[a-zA-Z0-9.\-_]+$`) as `_`. A
    /// stem whose names are taken (by `taken`, or by a unit listed earlier) gets `_2`, `_3`, … until they are free, so
    /// every unit's are its own and stay the same while the units before it do.
    static func componentStems(of units: [UnitCase], taken: Set<String>) -> [String: String] {
        var used = taken
        var stems: [String: String] = [:]
        for unit in units {
            var characters = unit.name.map { character -> Character in
                character.isASCII && (character.isLetter || character.isNumber || ".-_".contains(character))
                    ? character : "_"
            }
            if let first = characters.first, first.isLowercase { characters[0] = Character(first.uppercased()) }
            let base = characters.isEmpty ? "Unit" : String(characters)
            var stem = base
            var suffix = 2
            while used.contains(stem + "View") || used.contains(stem + "Actions") {
                stem = base + "_\(suffix)"
                suffix += 1
            }
            used.insert(stem + "View")
            used.insert(stem + "Actions")
            stems[unit.name] = stem
        }
        return stems
    }

    /// The unit's view schema, with a description naming the unit and saying how much of it is described.
    private static func viewComponent(of unit: UnitCase) -> JSONValue {
        let intro = "The view of the `\(unit.name)` page: the `view` of its snapshots, which its patches edit."
        guard var schema = unit.viewSchema.objectValue else {
            return ["description": .string(intro), "allOf": [unit.viewSchema]]
        }
        let description: String
        if schema.isEmpty {
            description =
                intro + " Not described: the View binds path by path (or its state's type cannot be described), so "
                + "it may hold anything ({})."
        } else {
            let parts = unit.parts.map { "`\($0.path)` (`\($0.name)`)" }.joined(separator: ", ")
            description =
                intro + " Derived from the declared state types"
                + (parts.isEmpty ? "" : " (its parts' at \(parts))")
                + "; a member described as {} is not described: it may hold anything."
        }
        if let own = schema["description"]?.stringValue {
            schema["description"] = .string(description + " " + own)
        } else {
            schema["description"] = .string(description)
        }
        return .object(schema)
    }

    /// A request to the unit's actions endpoint: one branch per action, with the value its type takes.
    private static func actionsComponent(of unit: UnitCase) -> JSONValue {
        guard !unit.actions.isEmpty else {
            return [
                "description": .string("The `\(unit.name)` page takes no actions: no action request is valid."),
                "not": [:],
            ]
        }
        return [
            "description": .string(
                "An action request to the `\(unit.name)` page (POST /api/pages/\(unit.name)/actions): one of its actions, "
                    + "with its value."),
            "oneOf": .array(unit.actions.map(actionSchema)),
        ]
    }

    /// A `Last-Event-ID`, header or query: a seq in decimal digits (spaces or tabs around them allowed; any
    /// number of digits, since one beyond the session's latest seq only asks for snapshots), or empty for none; the
    /// header wins, but each must be well formed.
    private static let eventIdentifierSchema: JSONValue = [
        "type": "string", "pattern": "^([ \\t]*[0-9]+[ \\t]*)?$",
    ]

    /// The session log's format (docs/PROTOCOL.md, "Session logs"): the store's records as MVVMR writes them.
    private static let sessionLogSchema: JSONValue = [
        "type": "object", "required": ["format", "version", "records"],
        "properties": [
            "format": ["const": "mvvmr-session-log"], "version": ["const": 2],
            "units": ["type": "array", "items": ["type": "string"]],
            // Present once the log was compacted: it stands for every record up to its number.
            "snapshot": [
                "type": "object", "required": ["format", "version", "number", "seq", "pages"],
                "properties": [
                    "format": ["const": "mvvmr-session-snapshot"], "version": ["const": 1],
                    "number": ["type": "integer", "minimum": 1], "time_ns": ["type": "integer"],
                    "seq": ["type": "integer"], "seed": ["type": "string"],
                    "wall_clock_ns": ["type": "integer"], "binds": ["type": "integer"],
                    "next_ordinal": ["type": "integer"], "stack": ["type": "array"],
                    "pages": ["type": "array", "items": ["type": "object"]],
                    "revs": ["type": "object", "additionalProperties": ["type": "integer"]],
                    "annotation": [:],
                ],
            ],
            "records": [
                "type": "array",
                "items": [
                    "type": "object", "required": ["number", "time_ns", "input"],
                    "properties": [
                        "number": ["type": "integer", "minimum": 1], "time_ns": ["type": "integer"],
                        "input": [
                            "type": "object", "required": ["type"],
                            "properties": [
                                "type": [
                                    "enum": [
                                        "start", "bind", "action", "navigate", "timer", "work", "rebind", "topic",
                                    ]
                                ]
                            ],
                        ],
                        "digests": ["type": "object", "additionalProperties": ["type": "string"]],
                        "seq": ["type": "integer"],
                        "revs": ["type": "object", "additionalProperties": ["type": "integer"]],
                        "annotation": [:],
                    ],
                ],
            ],
        ],
    ]
}

extension String {
    var replacingNonIdentifierCharacters: String {
        String(map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }
}
