import JSONPatch
import MVVMR

/// The JSON bodies of the page protocol (docs/PROTOCOL.md), built from the session's values.
enum ProtocolEncoding {
    static func actions(_ actions: [ActionDescriptor]) -> JSONValue {
        .array(actions.map { ["name": .string($0.name), "value": .string($0.valueType.rawValue)] })
    }

    /// A navigation state: `{"stack","presented","forward"}`.
    static func navigationState(_ state: NavigationState) -> JSONValue {
        [
            "stack": .array(state.stack.map { .string($0) }), "presented": state.presented.map { .string($0) } ?? .null,
            "forward": .array(state.forward.map { .string($0) }),
        ]
    }

    /// A refused navigation of a body (`navigation_error`): `{"code","message","details"?}`.
    static func navigationError(_ failure: PageError) -> JSONValue {
        var object: JSONObject = ["code": .string(failure.code.rawValue), "message": .string(failure.message)]
        if let unit = failure.unit { object["details"] = ["unit": .string(unit)] }
        return .object(object)
    }

    /// A page as it appears inside other bodies: `{"unit","rev","view","actions"}`.
    static func page(_ snapshot: PageSnapshot) -> JSONValue {
        ["unit": .string(snapshot.unit), "rev": .int(snapshot.rev), "view": snapshot.view, "actions": actions(snapshot.actions)]
    }

    /// A snapshot body: the page with the session, its seq and the navigation.
    static func snapshot(_ snapshot: PageSnapshot, session: String, sequence: Int, navigation: NavigationState) -> JSONValue {
        [
            "session": .string(session), "unit": .string(snapshot.unit), "rev": .int(snapshot.rev), "seq": .int(sequence),
            "view": snapshot.view, "actions": actions(snapshot.actions), "navigation": navigationState(navigation),
        ]
    }

    /// The body of a page read, written straight to bytes: the same text as `snapshot(…).jsonBytes` (a test
    /// holds them equal) without building the JSON tree first, since every page read pays for it.
    /// - Parameters:
    ///   - read: the page with the session's seq and navigation.
    ///   - session: the session id.
    ///   - encodedActions: `actions(read.snapshot.actions).jsonBytes`, which the server keeps per unit.
    static func snapshotBody(_ read: PageRead, session: String, encodedActions: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(192 + read.encodedView.count + encodedActions.count)
        bytes.appendLiteral(#"{"session":"#)
        JSONValue.encodeString(session, into: &bytes)
        bytes.appendLiteral(#","unit":"#)
        JSONValue.encodeString(read.snapshot.unit, into: &bytes)
        bytes.appendLiteral(#","rev":"#)
        JSONValue.encodeInteger(read.snapshot.rev, into: &bytes)
        bytes.appendLiteral(#","seq":"#)
        JSONValue.encodeInteger(read.sequence, into: &bytes)
        bytes.appendLiteral(#","view":"#)
        read.encodedView.withUnsafeBufferPointer { bytes.append(contentsOf: $0) }
        bytes.appendLiteral(#","actions":"#)
        encodedActions.withUnsafeBufferPointer { bytes.append(contentsOf: $0) }
        bytes.appendLiteral(#","navigation":{"stack":["#)
        for (index, unit) in read.navigation.stack.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValue.encodeString(unit, into: &bytes)
        }
        bytes.appendLiteral(#"],"presented":"#)
        if let presented = read.navigation.presented {
            JSONValue.encodeString(presented, into: &bytes)
        } else {
            bytes.appendLiteral("null")
        }
        bytes.appendLiteral(#","forward":["#)
        for (index, unit) in read.navigation.forward.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValue.encodeString(unit, into: &bytes)
        }
        bytes.appendLiteral("]}}")
        return bytes
    }

    /// A navigation: `{"type","unit","stack","presented","forward","page"}`.
    static func navigation(_ navigation: Navigation) -> JSONValue {
        [
            "type": .string(navigation.kind.rawValue), "unit": .string(navigation.unit),
            "stack": .array(navigation.state.stack.map { .string($0) }),
            "presented": navigation.state.presented.map { .string($0) } ?? .null,
            "forward": .array(navigation.state.forward.map { .string($0) }),
            "page": page(navigation.page),
        ]
    }

    /// An action response.
    static func actionResult(_ result: ActionResult) -> JSONValue {
        var body: JSONObject = ["unit": .string(result.unit), "rev": .int(result.rev), "seq": .int(result.sequence)]
        if let patch = result.patch {
            body["patch"] = patch.json
        } else if let snapshot = result.snapshot {
            body["snapshot"] = page(snapshot)
        }
        body["navigation"] = result.navigation.map(navigation) ?? .null
        if let failure = result.navigationFailure { body["navigation_error"] = navigationError(failure) }
        return .object(body)
    }

    /// The body of an action response, written straight to bytes when it is the common one (a patch, no
    /// navigation): the same text as `actionResult(result).jsonBytes`, which a test holds equal.
    static func actionResultBody(_ result: ActionResult) -> [UInt8] {
        guard let patch = result.patch, result.navigation == nil, result.navigationFailure == nil else {
            return actionResult(result).jsonBytes
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96 + 64 * patch.count)
        appendUnitAndRev(unit: result.unit, rev: result.rev, to: &bytes)
        bytes.appendLiteral(#","seq":"#)
        JSONValue.encodeInteger(result.sequence, into: &bytes)
        bytes.appendLiteral(#","patch":"#)
        patch.encode(into: &bytes)
        bytes.appendLiteral(#","navigation":null}"#)
        return bytes
    }

    /// `{"unit":…,"rev":…`: how an action response and a patch event's data both begin.
    private static func appendUnitAndRev(unit: String, rev: Int, to bytes: inout [UInt8]) {
        bytes.appendLiteral(#"{"unit":"#)
        JSONValue.encodeString(unit, into: &bytes)
        bytes.appendLiteral(#","rev":"#)
        JSONValue.encodeInteger(rev, into: &bytes)
    }

    /// A patch event's data: `{"unit","rev","patch"}`.
    static func patchEvent(_ patch: PagePatch) -> JSONValue {
        ["unit": .string(patch.unit), "rev": .int(patch.rev), "patch": patch.patch.json]
    }

    /// The SSE frame of a session event.
    static func frame(_ event: SessionEvent) -> [UInt8] {
        switch event.kind {
        case .patch(let patch):
            // The most frequent frame: its data written straight to bytes (the same text as `patchEvent(patch)`).
            return frame(name: "patch", sequence: event.sequence, capacity: 96 + 64 * patch.patch.count) { bytes in
                appendUnitAndRev(unit: patch.unit, rev: patch.rev, to: &bytes)
                bytes.appendLiteral(#","patch":"#)
                patch.patch.encode(into: &bytes)
                bytes.append(UInt8(ascii: "}"))
            }
        case .navigation(let navigation):
            return frame(name: "navigate", sequence: event.sequence, data: self.navigation(navigation))
        case .snapshot(let snapshot):
            return frame(name: "snapshot", sequence: event.sequence, data: page(snapshot))
        }
    }

    /// `id: N\nevent: NAME\ndata: JSON\n\n` (JSON is one line: the encoder never writes a newline).
    static func frame(name: String, sequence: Int?, data: JSONValue) -> [UInt8] {
        frame(name: name, sequence: sequence, capacity: 128) { data.encode(into: &$0) }
    }

    /// A frame whose data (one line of JSON) `writeData` appends.
    private static func frame(
        name: String, sequence: Int?, capacity: Int, writeData: (inout [UInt8]) -> Void
    ) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(capacity)
        if let sequence {
            bytes.appendLiteral("id: ")
            JSONValue.encodeInteger(sequence, into: &bytes)
            bytes.append(UInt8(ascii: "\n"))
        }
        bytes.appendLiteral("event: ")
        bytes.append(contentsOf: name.utf8)
        bytes.appendLiteral("\ndata: ")
        writeData(&bytes)
        bytes.append(contentsOf: [10, 10])
        return bytes
    }
}
