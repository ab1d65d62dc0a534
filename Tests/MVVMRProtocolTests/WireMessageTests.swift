import JSONPatch
import MVVMRProtocol
import Testing

/// Samples of every message, with the strings that need escaping and the optional members both present and absent.
enum WireSamples {
    static let actions = [WireAction(name: "increment", valueType: "int"), WireAction(name: "re\"set\n", valueType: "none")]
    static let navigation = WireNavigationState(stack: ["home", "counters", "settings"], presented: "settings", forward: ["q\"uote"])
    static let page = WirePage(
        unit: "counters \"quoted\"\n", rev: 12_345,
        view: ["rows": [["id": 1, "title": "Row 1", "count": -3], ["id": 2.5, "title": "é\u{1}", "count": nil]], "ok": true],
        actions: actions)
    static let emptyPage = WirePage(unit: "empty", rev: 0, view: [:], actions: [])
    static let patch = JSONPatch([
        .replace(path: JSONPointer(tokens: ["rows", "3", "count"]), value: 4),
        .add(path: JSONPointer(tokens: ["rows", "-"]), value: ["id": 11, "title": "Row \"11\"", "count": 0]),
        .move(from: JSONPointer(tokens: ["rows", "0"]), path: JSONPointer(tokens: ["rows", "5"])),
        .remove(path: JSONPointer(tokens: ["a/b", "~c"])),
    ])
    static let move = WireNavigation(kind: WireNavigationKind(rawValue: "push"), unit: "settings", state: navigation, page: page)
    static let refusal = WireNavigationError(code: "entry_refused", message: "A flow-only unit.", unit: "main")
    static let snapshot = WireSnapshot(session: "s_0123456789abcdef\\\"", page: page, seq: 987_654_321, navigation: navigation)

    /// Each message checked by `check`, by a name for failures.
    static func forEach(_ check: (String, any WireMessage) throws -> Void) rethrows {
        try check("action", actions[1])
        try check("navigation state", navigation)
        try check("empty navigation state", WireNavigationState(stack: []))
        try check("navigation error", refusal)
        try check("navigation error without details", WireNavigationError(code: "binding_failed", message: "no"))
        try check("page", page)
        try check("empty page", emptyPage)
        try check("snapshot", snapshot)
        try check("navigation", move)
        try check("action request", WireActionRequest(action: "increment", value: ["by": 2], rev: 7))
        try check("action request without rev", WireActionRequest(action: "reset"))
        try check("patch response", WireActionResponse(unit: "counters", rev: 7, seq: 42, change: .patch(patch)))
        try check("empty patch response", WireActionResponse(unit: "counters", rev: 7, seq: 42, change: .patch(JSONPatch())))
        try check(
            "navigating response",
            WireActionResponse(unit: "login", rev: 3, seq: 9, change: .snapshot(emptyPage), navigation: move, navigationError: refusal))
        try check("unchanged response", WireActionResponse(unit: "login", rev: 3, seq: 9, change: .none))
        try check("patch event", WirePatchEvent(unit: "counters", rev: 8, patch: patch))
        try check("expired event", WireExpiredEvent(reason: "evicted"))
        try check("error", WireErrorBody(code: "unknown_action", message: "No \"x\".", details: ["allowed": ["a", "b"]]))
        try check("error without details", WireErrorBody(code: "unknown_session", message: "Gone."))
        try check("new session", WireNewSession(unit: "employee", parameters: ["z": "1", "a": "é"]))
        try check("new session at the root", WireNewSession())
        try check("new session with parameters only", WireNewSession(parameters: ["id": "7"]))
        try check("session created", WireSessionCreated(page: snapshot, navigationError: refusal))
        try check("session", WireSession(session: "s_1", seq: 4, navigation: navigation, pages: [page, emptyPage]))
        try check("navigation back", WireNavigationRequest.back)
        try check("navigation forward", WireNavigationRequest.forward)
        try check("navigation open", WireNavigationRequest.open(unit: "employee", parameters: ["id": "7"]))
        try check("navigation response", WireNavigationResponse(seq: 5, navigation: move))
        try check("navigation response, nothing moved", WireNavigationResponse(seq: 5, navigation: nil))
        for status in WireStatus.allCases { try check("status \(status)", status) }
        try check(
            "units",
            WireUnits(
                root: "home",
                units: [
                    WireUnit(name: "home", route: "/", entry: "deep_link", actions: actions),
                    WireUnit(name: "main", route: "/main/:id", entry: "flow_only", actions: []),
                ]))
    }
}

@Suite struct WireMessageTests {
    static let context = WireSchemaContext(
        unitNames: ["home", "main", "employee", "counters", "login", "settings"], entryNames: ["deep_link", "flow_only"])
    static let validator = SchemaValidator(components: WireComponents.schemas(in: context))

    /// Every message's text is one line of JSON that its decoder reads back to the same message.
    @Test func everyMessageDecodesFromItsOwnEncoding() throws {
        try WireSamples.forEach { name, message in
            let bytes = message.jsonBytes
            #expect(!bytes.contains(10), "\(name): the text has a newline")
            try #require(try Self.decodes(message, from: bytes), "\(name): \(String(decoding: bytes, as: UTF8.self))")
        }
    }

    private static func decodes<Message: WireMessage>(_ message: Message, from bytes: [UInt8]) throws -> Bool {
        try Message(parsing: bytes) == message
    }

    /// Every message's text is valid against its own OpenAPI component, the schema the server publishes.
    @Test func everyMessageMatchesItsComponentSchema() throws {
        try WireSamples.forEach { name, message in
            let json = try JSONValue(parsing: message.jsonBytes)
            let schema = try #require(Self.validator.components[type(of: message).componentName], "\(name): no component")
            let problems = Self.validator.problems(json, schema)
            #expect(problems.isEmpty, "\(name): \(problems)")
        }
    }

    /// The members a component requires are the ones the decoder needs: dropping one makes the text invalid, and the
    /// decoder refuses it too, except for the members older peers may leave out, which read as their stated defaults.
    @Test func aMemberTheSchemaRequiresIsOneTheDecoderNeeds() throws {
        // Read with a default when missing: `presented` (none), `forward` (a server before the forward list), a page's `actions`, a
        // navigation's `unit` (the page's), an action's `value` (`none`), a snapshot's `navigation` members duplicated
        // at the top of a new session (read from its page).
        let defaulted: Set<String> = [
            "NavigationState.presented", "NavigationState.forward", "Navigation.presented", "Page.actions", "Navigation.forward", "Navigation.unit", "Action.value",
            "Snapshot.actions", "SessionCreated.session", "SessionCreated.navigation", "Unit.actions",
            "ActionResponse.navigation", "NavigationResponse.navigation",
        ]
        var checked = 0
        try WireSamples.forEach { name, message in
            let component = type(of: message).componentName
            guard case .object(let members) = try JSONValue(parsing: message.jsonBytes),
                let required = Self.validator.components[component]?["required"]?.arrayValue?.compactMap(\.stringValue)
            else { return }
            for member in required {
                var reduced = members
                reduced[member] = nil
                let text = JSONValue.object(reduced).jsonBytes
                #expect(!Self.validator.problems(.object(reduced), Self.validator.components[component] ?? [:]).isEmpty)
                let refused = !Self.decodesAsItsType(message, text)
                #expect(refused != defaulted.contains("\(component).\(member)"), "\(name): without '\(member)'")
                checked += 1
            }
        }
        #expect(checked > 60)
    }

    /// Whether `bytes` decode as a message of `sample`'s type.
    private static func decodesAsItsType<Message: WireMessage>(_ sample: Message, _ bytes: [UInt8]) -> Bool {
        (try? Message(parsing: bytes)) != nil
    }

    /// Every `$ref` in the components names a component, and every component is reachable by its name.
    @Test func everyReferenceResolves() {
        var references: [String] = []
        func collect(_ value: JSONValue) {
            switch value {
            case .object(let members):
                for (key, member) in members {
                    if key == "$ref", let text = member.stringValue { references.append(text) } else { collect(member) }
                }
            case .array(let elements): elements.forEach(collect)
            default: break
            }
        }
        collect(.object(Self.validator.components))
        #expect(!references.isEmpty)
        for reference in references {
            #expect(Self.validator.components[String(reference.dropFirst("#/components/schemas/".count))] != nil, "\(reference)")
        }
        #expect(Set(WireComponents.all.map { $0.componentName }).count == WireComponents.all.count)
    }

    /// A snapshot written from its view's and actions' text is the text of the snapshot written from their values.
    @Test func aSnapshotFromEncodedPartsIsTheSnapshotFromValues() throws {
        let snapshot = WireSamples.snapshot
        let bytes = WireSnapshot.encoded(
            session: snapshot.session, unit: snapshot.page.unit, rev: snapshot.page.rev, seq: snapshot.seq,
            encodedView: snapshot.page.view.jsonBytes, encodedActions: WireAction.encodedList(snapshot.page.actions),
            stack: snapshot.navigation.stack, presented: snapshot.navigation.presented,
            forward: snapshot.navigation.forward)
        #expect(String(decoding: bytes, as: UTF8.self) == String(decoding: snapshot.jsonBytes, as: UTF8.self))
        #expect(try WireSnapshot(parsing: bytes) == snapshot)
    }

    /// The snapshot's room is sized for the worst case: strings made only of bytes that take six each, and the
    /// longest integers, still come out whole (a write that did not fit would be left out, and the text not parse).
    @Test func aSnapshotOfStringsThatAllNeedEscapesIsWrittenWhole() throws {
        let worst = String(repeating: "\u{1}", count: 40)
        let snapshot = WireSnapshot(
            session: worst, page: WirePage(unit: worst, rev: Int.min, view: [worst: .string(worst)], actions: []),
            seq: Int.max, navigation: WireNavigationState(stack: [worst, worst], presented: worst, forward: [worst, worst]))
        #expect(try WireSnapshot(parsing: snapshot.jsonBytes) == snapshot)
        let navigation = WireNavigationState(stack: [worst], presented: nil, forward: [])
        #expect(try WireNavigationState(parsing: navigation.jsonBytes) == navigation)
    }

    /// The patch response written without making the message is the message's text.
    @Test func aPatchResponseWrittenDirectlyIsTheMessagesText() {
        for patch in [JSONPatch(), WireSamples.patch] {
            let message = WireActionResponse(unit: "c\"1", rev: 3, seq: 99, change: .patch(patch))
            #expect(WireActionResponse.patchBytes(unit: "c\"1", rev: 3, seq: 99, patch: patch) == message.jsonBytes)
        }
    }

    /// Events frame as `id`, `event` and one `data` line, and read back from their name and data.
    @Test func eventsFrameAndReadBack() throws {
        let events: [WireEvent] = [
            .patch(WirePatchEvent(unit: "counters", rev: 2, patch: WireSamples.patch)), .navigate(WireSamples.move),
            .snapshot(WireSamples.page), .expired(WireExpiredEvent(reason: "deleted")),
        ]
        let schema = try #require(Self.validator.components["Event"])
        for event in events {
            let sequence: Int? = event.name == "expired" ? nil : 41
            let text = String(decoding: event.frame(sequence: sequence), as: UTF8.self)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(text.hasSuffix("\n\n"))
            let fields = Dictionary(uniqueKeysWithValues: lines.filter { !$0.isEmpty }.map { line in
                let colon = line.firstIndex(of: ":") ?? line.endIndex
                return (String(line[..<colon]), String(line[line.index(colon, offsetBy: 2)...]))
            })
            #expect(fields["id"] == sequence.map(String.init))
            #expect(fields["event"] == event.name)
            let data = try #require(fields["data"])
            #expect(try WireEvent.decode(name: event.name, data: Array(data.utf8)) == event)
            var described: JSONObject = ["event": .string(event.name), "data": .string(data)]
            if let sequence { described["id"] = .string(String(sequence)) }
            #expect(Self.validator.problems(.object(described), schema).isEmpty, "\(event.name)")
        }
        // A patch's frame, written into room sized for it, is whole at the longest unit, rev and id.
        let worst = String(decoding: (1..<32).map { UInt8($0) }, as: UTF8.self)
        let longest = WirePatchEvent(
            unit: worst, rev: .min, patch: JSONPatch([.add(path: JSONPointer(tokens: [worst]), value: .string(worst))]))
        #expect(
            WireEvent.patch(longest).frame(sequence: .min)
                == Array("id: \(Int.min)\nevent: patch\ndata: ".utf8) + longest.jsonBytes + [10, 10])
        // (The room an allocation gets may be larger than asked for, so the size is checked itself too.)
        #expect(longest.encodedCapacity >= longest.jsonBytes.count)
        #expect(try WireEvent.decode(name: "later", data: Array("{}".utf8)) == nil)
        #expect(throws: WireDecodingError.self) { try WireEvent.decode(name: "patch", data: Array(#"{"unit":"a"}"#.utf8)) }
    }

    /// Members of the wrong type are refused with the member's name; members a message does not know are ignored.
    @Test func wrongMembersAreNamedAndUnknownOnesIgnored() throws {
        #expect(throws: WireDecodingError("a page needs 'rev' (an integer)")) {
            try WirePage(json: ["unit": "a", "rev": "1", "view": [:]])
        }
        #expect(throws: WireDecodingError("'stack' of a navigation state must be an array of strings")) {
            try WireNavigationState(json: ["stack": [1], "presented": nil])
        }
        #expect(throws: WireDecodingError("a snapshot must be a JSON object")) { try WireSnapshot(json: [1]) }
        #expect(throws: WireDecodingError.self) { try WireActionResponse(json: ["unit": "a", "rev": 1, "seq": 1, "patch": [["op": "jump"]]]) }
        #expect(throws: WireDecodingError.self) { try WirePage(parsing: Array("{\"unit\":".utf8)) }
        let page = try WirePage(json: ["unit": "a", "rev": 1, "view": nil, "later": true])
        #expect(page == WirePage(unit: "a", rev: 1, view: nil, actions: []))
    }

    /// The requests the server reads are refused with the messages its `400 invalid_request` carries.
    @Test func requestsAreRefusedWithTheServersMessages() {
        #expect(throws: WireDecodingError("The body must be a JSON object with an 'action'.")) { try WireActionRequest(json: []) }
        #expect(throws: WireDecodingError("'action' (a string) is required.")) { try WireActionRequest(json: ["value": 1]) }
        #expect(throws: WireDecodingError("'rev' must be a whole number.")) { try WireActionRequest(json: ["action": "a", "rev": 1.5]) }
        #expect(throws: WireDecodingError("'rev' must not be negative.")) { try WireActionRequest(json: ["action": "a", "rev": -1]) }
        #expect(throws: WireDecodingError("'unit' must be a string.")) { try WireNewSession(json: ["unit": 3]) }
        #expect(throws: WireDecodingError("'parameters' must be an object of strings.")) {
            try WireNewSession(json: ["parameters": ["id": 7]])
        }
        #expect(throws: WireDecodingError("The body must be a JSON object (or empty).")) { try WireNewSession(json: "x") }
        #expect(throws: WireDecodingError("'open' needs a 'unit' (a string).")) { try WireNavigationRequest(json: ["type": "open"]) }
        #expect(throws: WireDecodingError("'type' must be 'back', 'forward' or 'open'.")) {
            try WireNavigationRequest(json: ["type": "sideways"])
        }
        #expect((try? WireActionRequest(json: ["action": "a", "rev": 2.0])) == WireActionRequest(action: "a", rev: 2))
        #expect((try? WireActionRequest(json: ["action": "a", "rev": nil])) == WireActionRequest(action: "a"))
    }
}
