import JSONPatch
import MVVMR
import Testing

/// Tests one page the way a client uses it — actions in, patches out — with virtual time, and fails
/// the test for every change it did not assert (like the Composable Architecture's `TestStore`).
///
/// The tester binds a fresh page of the unit in its own session (virtual clock, your services).
/// Each step (`send`, `advance(by:)`, `runPendingWork()`) takes the page as the test last knew it,
/// lets you describe how it should look now, and records an issue when the page differs — including
/// when the step changed the page and you described nothing. A navigation the step caused must be
/// named with `navigation:`, and async work still pending when the tester goes away is an issue too.
///
/// ```swift
/// @Test func greets() throws {
///     let tester = try PageTester(.greeting, services: services)
///     #expect(tester.view == ["greeting": "Say hello to who?"])
///     tester.send(GreetingAction.showGreeting) { $0[at: "/greeting"] = "Hello David Blaine" }
///     // A value of any Encodable type, encoded as a client sends it:
///     tester.send(NotesAction.add, encoding: NewNote(text: "Milk")) { $0[at: "/rows/0/text"] = "Milk" }
///     // A refusal, checked to change nothing:
///     #expect(tester.sendRefused(NotesAction.add, ["text": 5])?.code == .invalidValue)
/// }
/// ```
///
/// Actions are sent as cases of the View's ``PageAction`` type, so a misspelled one does not compile; the string
/// forms (`send("showGreeting")`) remain for tests of the protocol itself.
public final class PageTester {
    /// The session the page lives in, for looking at other pages or the stack.
    public let session: PageSession
    /// The unit under test.
    public let unit: String
    /// The page as the test has asserted it so far.
    public private(set) var view: JSONValue
    /// The page's revision as the test has seen it so far.
    public private(set) var rev: Int
    /// The actions the page accepts.
    public let actions: [ActionDescriptor]
    private let log = EventLog()
    private let publications = PublicationLog()
    private var isFinished = false

    /// Binds a fresh page of `unit` in a new session with a virtual clock.
    /// - Parameters:
    ///   - unit: the unit to test.
    ///   - services: the services its ViewModel reads (usually fakes).
    ///   - parameters: its route parameters.
    ///   - value: a value for its ViewModel, as JSON, as a router sends it; nil for none.
    /// - Throws: the `PageError` when the page cannot be bound.
    public init(
        _ unit: UnitCase, services: Services = Services(), parameters: [String: String] = [:],
        sending value: JSONValue? = nil
    ) throws {
        let log = self.log
        session = PageSession(
            registry: UnitRegistry(root: unit, units: []), services: services, clock: .virtual,
            eventSink: { log.append($0) })
        let publications = self.publications
        session.setTopicListener { event in
            if case .published(let message, _) = event { publications.append(message) }
        }
        let result = try session.start(at: unit, parameters: parameters, sending: value)
        _ = log.take()
        self.unit = unit.name
        let page = result.navigation?.page
        view = page?.view ?? .null
        rev = page?.rev ?? 0
        actions = page?.actions ?? unit.actions
    }

    /// Binds a fresh page of `unit` in a new session with a virtual clock, sending its ViewModel `value`
    /// as a router does (`.push(unit, sending: value)`): encoded as JSON.
    /// - Parameters:
    ///   - unit: the unit to test.
    ///   - services: the services its ViewModel reads (usually fakes).
    ///   - parameters: its route parameters.
    ///   - value: a value for its ViewModel, read with `context.sentValue(as:)`.
    /// - Throws: `JSONValueCodingError` when `value` cannot be encoded as JSON; the `PageError` when the
    ///   page cannot be bound.
    public convenience init(
        _ unit: UnitCase, services: Services = Services(), parameters: [String: String] = [:],
        sending value: some Encodable & Sendable
    ) throws {
        // `.some`: a plain `JSONValue` argument would choose this initializer again.
        try self.init(unit, services: services, parameters: parameters, sending: .some(JSONValue(encoding: value)))
    }

    deinit {
        if !isFinished { checkNothingPending(sourceLocation: nil) }
    }

    /// Sends one of the View's declared actions (a case of its ``PageAction`` type, so a misspelled action does
    /// not compile), then checks the page against `expectedChange` applied to the page as last asserted.
    /// - Parameters:
    ///   - action: the action.
    ///   - value: its value; `null` for actions without one.
    ///   - part: for an action of one of the page's parts, the part's name (the action is sent as `part.action`).
    ///   - navigation: the navigation the action causes, if any; an unexpected one is an issue.
    ///   - sourceLocation: where issues are reported.
    ///   - expectedChange: changes the last asserted page into the expected one; nil means "nothing changes".
    /// - Returns: what the step emitted.
    @discardableResult
    public func send<Action: PageAction>(
        _ action: Action, _ value: JSONValue = .null, part: String? = nil, navigation: ExpectedNavigation? = nil,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ expectedChange: ((inout JSONValue) throws -> Void)? = nil
    ) -> [SessionEvent] {
        send(
            Self.wireName(of: action, part: part), value, navigation: navigation, sourceLocation: sourceLocation,
            expectedChange)
    }

    /// Sends one of the View's declared actions and checks the exact patch it produced on the page.
    /// - Parameters:
    ///   - action: the action.
    ///   - value: its value; `null` for actions without one.
    ///   - part: for an action of one of the page's parts, the part's name.
    ///   - patch: the operations the page's patch must consist of (empty: nothing changes).
    ///   - navigation: the navigation the action causes, if any.
    ///   - sourceLocation: where issues are reported.
    /// - Returns: what the step emitted.
    @discardableResult
    public func send<Action: PageAction>(
        _ action: Action, _ value: JSONValue = .null, part: String? = nil, patch: [PatchOperation],
        navigation: ExpectedNavigation? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) -> [SessionEvent] {
        send(
            Self.wireName(of: action, part: part), value, patch: patch, navigation: navigation,
            sourceLocation: sourceLocation)
    }

    /// Sends one of the View's declared actions with a value of any `Encodable` type (encoded as a client would send
    /// it), then checks the page against `expectedChange` applied to the page as last asserted.
    /// - Parameters:
    ///   - action: the action.
    ///   - value: its value, encoded as JSON.
    ///   - part: for an action of one of the page's parts, the part's name.
    ///   - navigation: the navigation the action causes, if any; an unexpected one is an issue.
    ///   - sourceLocation: where issues are reported.
    ///   - expectedChange: changes the last asserted page into the expected one; nil means "nothing changes".
    /// - Returns: what the step emitted.
    @discardableResult
    public func send<Action: PageAction>(
        _ action: Action, encoding value: some Encodable, part: String? = nil, navigation: ExpectedNavigation? = nil,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ expectedChange: ((inout JSONValue) throws -> Void)? = nil
    ) -> [SessionEvent] {
        let json: JSONValue
        do {
            json = try JSONValueEncoder().encode(value)
        } catch {
            Issue.record("the value of \(action.actionName) does not encode: \(error)", sourceLocation: sourceLocation)
            return []
        }
        return send(action, json, part: part, navigation: navigation, sourceLocation: sourceLocation, expectedChange)
    }

    /// Sends an action the page must refuse (an invalid value, a page not on the stack), and checks that it changed
    /// nothing: not the page, not its revision, no event.
    /// - Parameters:
    ///   - action: the action.
    ///   - value: its value.
    ///   - part: for an action of one of the page's parts, the part's name.
    ///   - sourceLocation: where issues are reported.
    /// - Returns: the refusal; nil (and an issue) when the page took the action.
    @discardableResult
    public func sendRefused<Action: PageAction>(
        _ action: Action, _ value: JSONValue = .null, part: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> PageError? {
        let name = Self.wireName(of: action, part: part)
        do {
            _ = try session.perform(name, value: value, on: unit, clientRevision: rev)
        } catch {
            _ = check(navigation: nil, sourceLocation: sourceLocation, nil)
            return error
        }
        Issue.record("\(name) with \(value) was taken; expected a refusal", sourceLocation: sourceLocation)
        _ = check(navigation: nil, sourceLocation: sourceLocation, nil)
        return nil
    }

    /// The name `action` is POSTed under: `part.action` for a part's.
    private static func wireName(of action: some PageAction, part: String?) -> String {
        part.map { $0 + "." + action.actionName } ?? action.actionName
    }

    /// Sends an action to the page, then checks the page against `expectedChange` applied to the page
    /// as last asserted.
    /// - Parameters:
    ///   - action: the action's name.
    ///   - value: its value; `null` for actions without one.
    ///   - navigation: the navigation the action causes, if any; an unexpected one is an issue.
    ///   - sourceLocation: where issues are reported.
    ///   - expectedChange: changes the last asserted page into the expected one; nil means "nothing
    ///     changes".
    /// - Returns: what the step emitted.
    @discardableResult
    public func send(
        _ action: String, _ value: JSONValue = .null, navigation: ExpectedNavigation? = nil,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ expectedChange: ((inout JSONValue) throws -> Void)? = nil
    ) -> [SessionEvent] {
        do {
            _ = try session.perform(action, value: value, on: unit, clientRevision: rev)
        } catch {
            Issue.record("sending \(action) failed: \(error)", sourceLocation: sourceLocation)
            return []
        }
        return check(navigation: navigation, sourceLocation: sourceLocation, expectedChange)
    }

    /// Sends an action and checks the exact patch it produced on the page.
    /// - Parameters:
    ///   - action: the action's name.
    ///   - value: its value; `null` for actions without one.
    ///   - patch: the operations the page's patch must consist of (empty: nothing changes).
    ///   - navigation: the navigation the action causes, if any.
    ///   - sourceLocation: where issues are reported.
    /// - Returns: what the step emitted.
    @discardableResult
    public func send(
        _ action: String, _ value: JSONValue = .null, patch: [PatchOperation], navigation: ExpectedNavigation? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> [SessionEvent] {
        do {
            _ = try session.perform(action, value: value, on: unit, clientRevision: rev)
        } catch {
            Issue.record("sending \(action) failed: \(error)", sourceLocation: sourceLocation)
            return []
        }
        let events = log.take()
        let operations = pagePatches(in: events).flatMap(\.patch.operations)
        if operations != patch {
            Issue.record(
                "patch differs:\n  expected: \(JSONPatch(patch))\n  actual:   \(JSONPatch(operations))",
                sourceLocation: sourceLocation)
        }
        return check(events, navigation: navigation, sourceLocation: sourceLocation) { view in
            view = try JSONPatch(patch).apply(to: view)
        }
    }

    /// Moves virtual time forward, firing due timers, then checks the page.
    /// - Parameters:
    ///   - duration: how far to move.
    ///   - navigation: the navigation the timers cause, if any.
    ///   - sourceLocation: where issues are reported.
    ///   - expectedChange: changes the last asserted page into the expected one; nil: nothing changes.
    /// - Returns: what the step emitted.
    @discardableResult
    public func advance(
        by duration: Duration, navigation: ExpectedNavigation? = nil, sourceLocation: SourceLocation = #_sourceLocation,
        _ expectedChange: ((inout JSONValue) throws -> Void)? = nil
    ) -> [SessionEvent] {
        session.advanceTime(by: duration)
        return check(navigation: navigation, sourceLocation: sourceLocation, expectedChange)
    }

    /// Runs the async work the page started (Model calls in `flatMapLatest`, `perform`), in the order
    /// it started, each result re-entering the page like in production; then checks the page.
    /// - Parameters:
    ///   - navigation: the navigation the results cause, if any.
    ///   - sourceLocation: where issues are reported.
    ///   - expectedChange: changes the last asserted page into the expected one; nil: nothing changes.
    /// - Returns: what the step emitted.
    @discardableResult
    public func runPendingWork(
        navigation: ExpectedNavigation? = nil, sourceLocation: SourceLocation = #_sourceLocation,
        _ expectedChange: ((inout JSONValue) throws -> Void)? = nil
    ) async -> [SessionEvent] {
        await session.runPendingWork()
        return check(navigation: navigation, sourceLocation: sourceLocation, expectedChange)
    }

    /// Delivers `value` on `topic` as a message from the topic's bus arrives (one input of the session, recorded
    /// as ``SessionInput/topic(name:value:)``), then checks the page. The page's own posts come back to it this way
    /// in production too: take them with ``published(on:sourceLocation:)`` and deliver them here.
    /// - Parameters:
    ///   - value: the value, encoded as JSON as a publisher encodes it.
    ///   - topic: the topic.
    ///   - navigation: the navigation the message causes, if any.
    ///   - sourceLocation: where issues are reported.
    ///   - expectedChange: changes the last asserted page into the expected one; nil: nothing changes.
    /// - Returns: what the step emitted.
    @discardableResult
    public func receive<Value>(
        _ value: Value, on topic: Topic<Value>, navigation: ExpectedNavigation? = nil,
        sourceLocation: SourceLocation = #_sourceLocation, _ expectedChange: ((inout JSONValue) throws -> Void)? = nil
    ) -> [SessionEvent] {
        let json: JSONValue
        do {
            json = try JSONValueEncoder().encode(value)
        } catch {
            Issue.record("\(value) cannot be encoded as JSON: \(error)", sourceLocation: sourceLocation)
            return []
        }
        if session.receive(TopicMessage(topic: topic.name, value: json)) == nil {
            Issue.record("no page of the session listens to the topic \(topic.name)", sourceLocation: sourceLocation)
        }
        return check(navigation: navigation, sourceLocation: sourceLocation, expectedChange)
    }

    /// Takes the values the session's pages published on `topic` since the last call, in order. Publications left
    /// untaken when the tester finishes are an issue, like async work left pending.
    /// - Parameters:
    ///   - topic: the topic.
    ///   - sourceLocation: where issues are reported (a value that does not decode as a `Value`).
    /// - Returns: the values.
    public func published<Value>(on topic: Topic<Value>, sourceLocation: SourceLocation = #_sourceLocation) -> [Value] {
        publications.take(topic: topic.name).compactMap { message in
            do {
                return try JSONValueDecoder().decode(Value.self, from: message.value)
            } catch {
                Issue.record(
                    "\(message.value.jsonString) is not a \(Value.self): \(error)", sourceLocation: sourceLocation)
                return nil
            }
        }
    }

    /// Ends the test of this page: records an issue if async work is still pending, then releases the
    /// session. Called by `deinit` when you do not.
    /// - Parameter sourceLocation: where issues are reported.
    public func finish(sourceLocation: SourceLocation = #_sourceLocation) {
        isFinished = true
        checkNothingPending(sourceLocation: sourceLocation)
        session.releaseAll()
    }

    private func checkNothingPending(sourceLocation: SourceLocation?) {
        func record(_ message: Comment) {
            if let sourceLocation {
                Issue.record(message, sourceLocation: sourceLocation)
            } else {
                Issue.record(message)
            }
        }
        let pending = session.pendingWorkCount
        if pending > 0 { record("\(pending) async job(s) of \(unit) still pending: run them with runPendingWork()") }
        let unasserted = publications.takeAll()
        if !unasserted.isEmpty {
            let list = unasserted.map { "\($0.topic): \($0.value.jsonString)" }.joined(separator: ", ")
            record("\(unasserted.count) value(s) published but never taken with published(on:): \(list)")
        }
    }

    private func check(
        navigation: ExpectedNavigation?, sourceLocation: SourceLocation,
        _ expectedChange: ((inout JSONValue) throws -> Void)?
    ) -> [SessionEvent] {
        check(log.take(), navigation: navigation, sourceLocation: sourceLocation, expectedChange)
    }

    private func pagePatches(in events: [SessionEvent]) -> [PagePatch] {
        events.compactMap { event in
            if case .patch(let patch) = event.kind, patch.unit == unit { return patch }
            return nil
        }
    }

    private func check(
        _ events: [SessionEvent], navigation expectedNavigation: ExpectedNavigation?, sourceLocation: SourceLocation,
        _ expectedChange: ((inout JSONValue) throws -> Void)?
    ) -> [SessionEvent] {
        // Replay the step's events on the page as last asserted, as a client would.
        var actual = view
        var actualRev = rev
        var navigations: [Navigation] = []
        for event in events {
            switch event.kind {
            case .patch(let pagePatch) where pagePatch.unit == unit:
                if pagePatch.rev != actualRev + 1 {
                    Issue.record(
                        "patch to rev \(pagePatch.rev) arrived at rev \(actualRev)", sourceLocation: sourceLocation)
                }
                do {
                    actual = try pagePatch.patch.apply(to: actual)
                } catch {
                    Issue.record("patch \(pagePatch.patch) does not apply: \(error)", sourceLocation: sourceLocation)
                }
                actualRev = pagePatch.rev
            case .navigation(let navigation):
                navigations.append(navigation)
                if navigation.page.unit == unit {
                    actual = navigation.page.view
                    actualRev = navigation.page.rev
                }
            case .snapshot(let snapshot) where snapshot.unit == unit:
                actual = snapshot.view
                actualRev = snapshot.rev
            default:
                break
            }
        }
        checkNavigation(navigations, expected: expectedNavigation, sourceLocation: sourceLocation)
        var expected = view
        if let expectedChange {
            do {
                try expectedChange(&expected)
            } catch {
                Issue.record("describing the expected page threw: \(error)", sourceLocation: sourceLocation)
            }
            if expected == view, actual == view {
                Issue.record(
                    "expected the page to change, but it did not: \(view.jsonString)", sourceLocation: sourceLocation)
            }
        }
        if expected != actual {
            let what = expectedChange == nil ? "the page changed but the test asserted no change" : "the page differs"
            let operations = JSONPatch.diff(from: expected, to: actual)
            Issue.record(
                """
                \(what):
                  expected: \(expected.jsonString)
                  actual:   \(actual.jsonString)
                  (expected → actual: \(operations))
                """,
                sourceLocation: sourceLocation)
        }
        view = actual
        rev = actualRev
        return events
    }

    private func checkNavigation(
        _ navigations: [Navigation], expected: ExpectedNavigation?, sourceLocation: SourceLocation
    ) {
        let actual = navigations.last.map { ExpectedNavigation($0.kind, $0.unit) }
        guard actual != expected else { return }
        switch (expected, actual) {
        case (nil, let actual?):
            Issue.record("unasserted navigation: \(actual)", sourceLocation: sourceLocation)
        case (let expected?, nil):
            Issue.record("expected navigation \(expected), but none happened", sourceLocation: sourceLocation)
        case (let expected?, let actual?):
            Issue.record("expected navigation \(expected), got \(actual)", sourceLocation: sourceLocation)
        case (nil, nil):
            break
        }
    }
}
