import JSONPatch
import MVVMR
import Testing

@Suite struct PageSessionActionTests {
    @Test func startBindsTheRootAndEmitsARootNavigation() throws {
        let (session, events) = makeSession()
        let result = try session.start()
        let navigation = try #require(result.navigation)
        #expect(navigation.kind == .root)
        #expect(navigation.page.view == ["greeting": "Say hello to who?"])
        #expect(navigation.page.rev == 0)
        #expect(navigation.page.actions == [ActionDescriptor(name: "showGreeting", valueType: .none)])
        #expect(result.state == NavigationState(stack: ["greeting"], presented: nil))
        #expect(events.all.map(\.summary) == ["navigation root greeting"])
        #expect(result.sequence == 1)
    }

    @Test func oneActionIsOnePatchAndOneRevision() throws {
        let (session, events) = makeSession()
        try session.start()
        _ = events.take()
        let result = try session.perform("showGreeting", on: "greeting", clientRevision: 0)
        #expect(result.rev == 1)
        #expect(result.patch == JSONPatch([.replace(path: pointer("/greeting"), value: "Hello David Blaine")]))
        #expect(result.navigation == nil)
        #expect(result.sequence == 2)
        #expect(events.all.map(\.summary) == ["patch greeting 1"])
        #expect(result.events == events.all)
    }

    @Test func anActionThatChangesNothingKeepsTheRevisionAndEmitsNoEvent() throws {
        let (session, events) = makeSession()
        try session.start()
        try session.perform("showGreeting", on: "greeting")
        _ = events.take()
        let again = try session.perform("showGreeting", on: "greeting")
        #expect(again.rev == 1)
        #expect(again.patch == JSONPatch([]))
        #expect(events.all.isEmpty)
    }

    @Test func writesOfSeveralOutputsAreOnePatch() throws {
        let (session, _) = makeSession(root: .counter)
        try session.start()
        let result = try session.perform("add", value: 5, on: "counter")
        #expect(result.rev == 1)
        #expect(
            result.patch
                == JSONPatch([
                    .replace(path: pointer("/count"), value: 5), .replace(path: pointer("/stats/count"), value: 5),
                ]))
    }

    @Test func clientBehindGetsTheConcatenatedCatchUpPatch() throws {
        let (session, _) = makeSession(root: .counter)
        let start = try session.start()
        var view = try #require(start.navigation?.page.view)
        try session.perform("increment", on: "counter")
        try session.perform("rename", value: "clicks", on: "counter")
        let result = try session.perform("increment", on: "counter", clientRevision: 0)
        #expect(result.rev == 3)
        let patch = try #require(result.patch)
        #expect(patch.count == 5)
        view = try patch.apply(to: view)
        #expect(view == ["count": 2, "stats": ["count": 2], "name": "clicks", "flag": false])
        #expect(session.pages.first { $0.unit == "counter" }?.view == view)
    }

    @Test func clientTooFarBehindGetsASnapshotInstead() throws {
        let (session, _) = makeSession(root: .counter, historyLimit: 2)
        try session.start()
        for _ in 0..<3 { try session.perform("increment", on: "counter") }
        let result = try session.perform("increment", on: "counter", clientRevision: 0)
        #expect(result.patch == nil)
        let snapshot = try #require(result.snapshot)
        #expect(snapshot.rev == 4)
        #expect(snapshot.view[pointer("/count")] == 4)
        let recent = try session.perform("increment", on: "counter", clientRevision: 3)
        #expect(recent.patch?.count == 4)
    }

    @Test func catchUpWorksAcrossTheWrappedHistoryRing() throws {
        let (session, _) = makeSession(root: .counter, historyLimit: 3)
        try session.start()
        var views: [Int: JSONValue] = [:]
        for _ in 0..<7 {
            let result = try session.perform("increment", on: "counter")
            views[result.rev] = session.pages.first?.view
        }
        for clientRevision in 4...7 {
            let result = try session.perform("noop", on: "counter", clientRevision: clientRevision)
            let patch = try #require(result.patch)
            #expect(try patch.apply(to: #require(views[clientRevision])) == views[7])
        }
        let tooOld = try session.perform("noop", on: "counter", clientRevision: 3)
        #expect(tooOld.patch == nil)
        #expect(tooOld.snapshot?.rev == 7)
    }

    @Test func unknownActionListsTheAllowedActions() throws {
        let (session, events) = makeSession()
        try session.start()
        _ = events.take()
        let error = #expect(throws: PageError.self) { try session.perform("wave", on: "greeting") }
        #expect(error?.code == .unknownAction)
        #expect(error?.allowed == ["showGreeting"])
        #expect(events.all.isEmpty)
        #expect(session.sequence == 1)
    }

    @Test(arguments: [
        ("add", JSONValue.string("5")), ("add", 1.5), ("rename", 3), ("scale", "x"), ("flag", 1), ("increment", 1),
    ])
    func valueOfTheWrongTypeIsInvalidValue(action: String, value: JSONValue) throws {
        let (session, _) = makeSession(root: .counter)
        try session.start()
        let error = #expect(throws: PageError.self) { try session.perform(action, value: value, on: "counter") }
        #expect(error?.code == .invalidValue)
        #expect(session.pages.first?.rev == 0)
    }

    @Test func valuesOfEachTypeDecode() throws {
        let (session, _) = makeSession(root: .counter)
        try session.start()
        try session.perform("add", value: 2.0, on: "counter")
        try session.perform("scale", value: 3, on: "counter")
        try session.perform("flag", value: true, on: "counter")
        try session.perform("rename", value: "n", on: "counter")
        let view = try #require(session.pages.first?.view)
        #expect(view == ["count": 5, "stats": ["count": 5], "name": "n", "flag": true])
    }

    @Test func revisionAheadOrNegativeIsInvalidRequest() throws {
        let (session, _) = makeSession()
        try session.start()
        for revision in [-1, 1] {
            let error = #expect(throws: PageError.self) {
                try session.perform("showGreeting", on: "greeting", clientRevision: revision)
            }
            #expect(error?.code == .invalidRequest)
        }
        #expect(session.pages.first?.rev == 0)
    }

    @Test func actionForAnUnboundOrUnknownUnitIsRefused() throws {
        let (session, _) = makeSession()
        try session.start()
        let unbound = #expect(throws: PageError.self) { try session.perform("increment", on: "counter") }
        #expect(unbound?.code == .pageNotBound)
        let unknown = #expect(throws: PageError.self) { try session.perform("x", on: "nowhere") }
        #expect(unknown?.code == .unknownUnit)
    }

    @Test func snapshotBindsOutsideTheStackWithOneEventAndParameters() throws {
        let (session, events) = makeSession()
        try session.start()
        _ = events.take()
        let snapshot = try session.snapshot(of: "counter")
        #expect(snapshot.rev == 0)
        #expect(snapshot.view == ["count": 0, "stats": ["count": 0], "name": "counter", "flag": false])
        #expect(events.take().map(\.summary) == ["snapshot counter 0"])
        #expect(session.navigation.stack == ["greeting"])
        _ = try session.snapshot(of: "counter")
        #expect(events.all.isEmpty)
        let unknown = #expect(throws: PageError.self) { try session.snapshot(of: "nowhere") }
        #expect(unknown?.code == .unknownUnit)
    }

    @Test func unitActionsAreKnownWithoutASession() {
        #expect(
            UnitCase.counter.actions.map { "\($0.name):\($0.valueType.rawValue)" } == [
                "increment:none", "add:int", "rename:string", "scale:number", "flag:bool", "noop:none",
            ])
        #expect(UnitCase.greeting.route == "/greeting")
        #expect(UnitCase.about.actions.isEmpty)
    }
}
