import JSONPatch
import MVVMR

/// The OpenAPI 3.1 description of the page protocol, with each unit's actions and their value types.
enum OpenAPIDocument {
    static func make(registry: UnitRegistry) -> JSONValue {
        var paths = JSONObject()
        let sessionHeader: JSONValue = [
            "name": "X-Session-ID", "in": "header", "required": false,
            "description": "The session id (the `mvvmr_session` cookie works too; the header wins).",
            "schema": ["type": "string"],
        ]
        let unitParameter: JSONValue = [
            "name": "unit", "in": "path", "required": true,
            "schema": ["type": "string", "enum": .array(registry.units.map { .string($0.name) })],
        ]
        func errors(_ statuses: [String]) -> JSONObject {
            var responses = JSONObject()
            for status in statuses {
                responses[status] = [
                    "description": "An error (see docs/PROTOCOL.md for the codes).",
                    "content": ["application/json": ["schema": ["$ref": "#/components/schemas/Error"]]],
                ]
            }
            return responses
        }
        func jsonResponse(_ description: String, _ schema: String) -> JSONValue {
            ["description": .string(description), "content": ["application/json": ["schema": ["$ref": .string("#/components/schemas/\(schema)")]]]]
        }
        func operation(_ summary: String, _ id: String, parameters: [JSONValue] = [], body: JSONValue? = nil, responses: JSONObject) -> JSONValue {
            var object: JSONObject = ["summary": .string(summary), "operationId": .string(id), "responses": .object(responses)]
            if !parameters.isEmpty { object["parameters"] = .array(parameters) }
            if let body { object["requestBody"] = body }
            return .object(object)
        }
        func merged(_ first: JSONObject, _ second: JSONObject) -> JSONObject {
            var result = first
            for (key, value) in second { result[key] = value }
            return result
        }

        paths["/api/units"] = ["get": operation("The registered units and the root.", "listUnits", responses: ["200": jsonResponse("The units.", "Units")])]
        paths["/api/sessions"] = [
            "post": operation(
                "Open a session with the root unit (or `unit`) bound.", "createSession",
                body: ["required": false, "content": ["application/json": ["schema": ["$ref": "#/components/schemas/NewSession"]]]],
                responses: merged(["201": jsonResponse("The new session.", "SessionCreated")], errors(["400", "403", "429", "503"])))
        ]
        paths["/api/session"] = [
            "get": operation(
                "The session: navigation and every live page.", "getSession", parameters: [sessionHeader],
                responses: merged(["200": jsonResponse("The session.", "Session")], errors(["404"]))),
            "delete": operation(
                "End the session.", "deleteSession", parameters: [sessionHeader],
                responses: merged(["204": ["description": "Ended."]], errors(["403", "404"]))),
        ]
        paths["/api/pages/{unit}"] = [
            "get": operation(
                "A page's snapshot, binding it first if needed (creates a session when none is sent).", "getPage",
                parameters: [unitParameter, sessionHeader],
                responses: merged(["200": jsonResponse("The page.", "Snapshot")], errors(["404", "429", "503"])))
        ]
        paths["/api/pages/{unit}/actions"] = [
            "post": operation(
                "Deliver one action to the page's Input.", "performAction",
                parameters: [
                    unitParameter, sessionHeader,
                    ["name": "Idempotency-Key", "in": "header", "required": false, "schema": ["type": "string"]],
                ],
                body: ["required": true, "content": ["application/json": ["schema": ["$ref": "#/components/schemas/ActionRequest"]]]],
                responses: merged(["200": jsonResponse("What the action changed.", "ActionResponse")], errors(["400", "403", "404", "409", "413", "422"])))
        ]
        for unit in registry.units where !unit.actions.isEmpty {
            paths["/api/pages/\(unit.name)/actions"] = [
                "post": operation(
                    "Deliver one action to the `\(unit.name)` page.", "perform_\(unit.name.replacingNonIdentifierCharacters)",
                    parameters: [sessionHeader, ["name": "Idempotency-Key", "in": "header", "required": false, "schema": ["type": "string"]]],
                    body: ["required": true, "content": ["application/json": ["schema": ["oneOf": .array(unit.actions.map(actionSchema))]]]],
                    responses: merged(["200": jsonResponse("What the action changed.", "ActionResponse")], errors(["400", "403", "404", "409", "422"])))
            ]
        }
        paths["/api/navigation"] = [
            "post": operation(
                "Client-initiated navigation: back, or open a unit.", "navigate", parameters: [sessionHeader],
                body: ["required": true, "content": ["application/json": ["schema": ["$ref": "#/components/schemas/NavigationRequest"]]]],
                responses: merged(["200": jsonResponse("The navigation.", "NavigationResponse")], errors(["400", "403", "404"])))
        ]
        paths["/api/events"] = [
            "get": operation(
                "Server-Sent Events: every event of the session (patch, navigate, snapshot, expired).", "events",
                parameters: [
                    sessionHeader,
                    ["name": "Last-Event-ID", "in": "header", "required": false, "schema": ["type": "integer", "minimum": 0]],
                    ["name": "lastEventId", "in": "query", "required": false, "schema": ["type": "integer", "minimum": 0]],
                ],
                responses: merged(["200": ["description": "The event stream.", "content": ["text/event-stream": ["schema": ["type": "string"]]]]], errors(["400", "404"])))
        ]
        paths["/api/openapi.json"] = ["get": operation("This document.", "openAPI", responses: ["200": ["description": "OpenAPI 3.1.", "content": ["application/json": ["schema": ["type": "object"]]]]])]
        paths["/healthz"] = ["get": operation("Liveness.", "health", responses: ["200": ["description": "Alive."]])]
        paths["/readyz"] = ["get": operation("Readiness.", "ready", responses: ["200": ["description": "Ready."], "503": ["description": "Draining."]])]
        paths["/metrics"] = ["get": operation("Prometheus metrics.", "metrics", responses: ["200": ["description": "Text exposition format.", "content": ["text/plain": ["schema": ["type": "string"]]]]])]

        return [
            "openapi": "3.1.0",
            "info": [
                "title": "MVVMR page protocol", "version": "1",
                "description": "Pages as JSON view-models; actions answered with RFC 6902 JSON Patches; Server-Sent Events.",
            ],
            "paths": .object(paths),
            "components": ["schemas": schemas],
        ]
    }

    private static func valueSchema(_ type: ActionValueType) -> JSONValue {
        switch type {
        case .none: ["type": "null"]
        case .string: ["type": "string"]
        case .int: ["type": "integer"]
        case .number: ["type": "number"]
        case .bool: ["type": "boolean"]
        case .object: ["type": "object"]
        case .array: ["type": "array"]
        }
    }

    private static func actionSchema(_ action: ActionDescriptor) -> JSONValue {
        [
            "type": "object",
            "required": .array(action.valueType == .none ? ["action"] : ["action", "value"]),
            "properties": [
                "action": ["const": .string(action.name)],
                "value": valueSchema(action.valueType),
                "rev": ["type": "integer", "minimum": 0],
            ],
        ]
    }

    private static let schemas: JSONValue = [
        "Error": [
            "type": "object", "required": ["error"],
            "properties": [
                "error": [
                    "type": "object", "required": ["code", "message"],
                    "properties": ["code": ["type": "string"], "message": ["type": "string"], "details": ["type": "object"]],
                ]
            ],
        ],
        "Action": [
            "type": "object", "required": ["name", "value"],
            "properties": [
                "name": ["type": "string"],
                "value": ["type": "string", "enum": ["none", "string", "int", "number", "bool", "object", "array"]],
            ],
        ],
        "Units": [
            "type": "object", "required": ["root", "units"],
            "properties": [
                "root": ["type": "string"],
                "units": [
                    "type": "array",
                    "items": [
                        "type": "object", "required": ["name", "route", "actions"],
                        "properties": [
                            "name": ["type": "string"], "route": ["type": "string"],
                            "actions": ["type": "array", "items": ["$ref": "#/components/schemas/Action"]],
                        ],
                    ],
                ],
            ],
        ],
        "NavigationState": [
            "type": "object", "required": ["stack", "presented"],
            "properties": ["stack": ["type": "array", "items": ["type": "string"]], "presented": ["type": ["string", "null"]]],
        ],
        "Page": [
            "type": "object", "required": ["unit", "rev", "view", "actions"],
            "properties": [
                "unit": ["type": "string"], "rev": ["type": "integer"], "view": [:],
                "actions": ["type": "array", "items": ["$ref": "#/components/schemas/Action"]],
            ],
        ],
        "Snapshot": [
            "type": "object", "required": ["session", "unit", "rev", "seq", "view", "actions", "navigation"],
            "properties": [
                "session": ["type": "string"], "unit": ["type": "string"], "rev": ["type": "integer"], "seq": ["type": "integer"],
                "view": [:], "actions": ["type": "array", "items": ["$ref": "#/components/schemas/Action"]],
                "navigation": ["$ref": "#/components/schemas/NavigationState"],
            ],
        ],
        "NewSession": [
            "type": "object",
            "properties": ["unit": ["type": "string"], "parameters": ["type": "object", "additionalProperties": ["type": "string"]]],
        ],
        "SessionCreated": [
            "type": "object", "required": ["session", "navigation", "page"],
            "properties": [
                "session": ["type": "string"], "navigation": ["$ref": "#/components/schemas/NavigationState"],
                "page": ["$ref": "#/components/schemas/Snapshot"],
            ],
        ],
        "Session": [
            "type": "object", "required": ["session", "seq", "navigation", "pages"],
            "properties": [
                "session": ["type": "string"], "seq": ["type": "integer"],
                "navigation": ["$ref": "#/components/schemas/NavigationState"],
                "pages": ["type": "array", "items": ["$ref": "#/components/schemas/Snapshot"]],
            ],
        ],
        "PatchOperation": [
            "type": "object", "required": ["op", "path"],
            "properties": [
                "op": ["type": "string", "enum": ["add", "remove", "replace", "move", "copy", "test"]],
                "path": ["type": "string"], "from": ["type": "string"], "value": [:],
            ],
        ],
        "Navigation": [
            "type": "object", "required": ["type", "unit", "stack", "presented", "page"],
            "properties": [
                "type": ["type": "string", "enum": ["push", "present", "root", "back"]],
                "unit": ["type": "string"], "stack": ["type": "array", "items": ["type": "string"]],
                "presented": ["type": ["string", "null"]], "page": ["$ref": "#/components/schemas/Page"],
            ],
        ],
        "ActionRequest": [
            "type": "object", "required": ["action"],
            "properties": ["action": ["type": "string"], "value": [:], "rev": ["type": "integer", "minimum": 0]],
        ],
        "ActionResponse": [
            "type": "object", "required": ["unit", "rev", "seq", "navigation"],
            "properties": [
                "unit": ["type": "string"], "rev": ["type": "integer"], "seq": ["type": "integer"],
                "patch": ["type": "array", "items": ["$ref": "#/components/schemas/PatchOperation"]],
                "snapshot": ["$ref": "#/components/schemas/Page"],
                "navigation": ["oneOf": [["type": "null"], ["$ref": "#/components/schemas/Navigation"]]],
            ],
        ],
        "NavigationRequest": [
            "type": "object", "required": ["type"],
            "properties": [
                "type": ["type": "string", "enum": ["back", "open"]], "unit": ["type": "string"],
                "parameters": ["type": "object", "additionalProperties": ["type": "string"]],
            ],
        ],
        "NavigationResponse": [
            "type": "object", "required": ["seq", "navigation"],
            "properties": [
                "seq": ["type": "integer"], "unit": ["type": "string"], "rev": ["type": "integer"],
                "patch": ["type": "array"], "navigation": ["oneOf": [["type": "null"], ["$ref": "#/components/schemas/Navigation"]]],
            ],
        ],
    ]
}

extension String {
    var replacingNonIdentifierCharacters: String {
        String(map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }
}
