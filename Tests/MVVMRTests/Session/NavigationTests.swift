import JSONPatch
import MVVMR
import Testing

@Suite struct NavigationTests {
    /// login → (action login "ann") → main, as root.
    func loggedIn() throws -> (PageSession, RecordedEvents) {
        let (session, events) = makeSession(root: .login)
        try session.start()
        try session.perform("login", value: "ann", on: "login")
        _ = events.take()
        return (session, events)
    }

    @Test func rootReleasesEveryPageAndSendsTheValueForward() throws {
        let (session, events) = makeSession(root: .login)
        try session.start()
        _ = try session.snapshot(of: "counter")
        _ = events.take()
        let result = try session.perform("login", value: "ann", on: "login")
        let navigation = try #require(result.navigation)
        #expect(navigation.kind == .root)
        #expect(navigation.unit == "main")
        #expect(navigation.page.view == ["user": "ann"])
        #expect(navigation.state == NavigationState(stack: ["main"], presented: nil))
        #expect(session.pages.map(\.unit) == ["main"])
        #expect(result.unit == "login")
        #expect(result.patch == JSONPatch([]))
        #expect(events.all.map(\.summary) == ["navigation root main"])
    }

    @Test func pushThenBackWithACallbackPatchesThePageBelowBeforeNavigating() throws {
        let (session, events) = try loggedIn()
        let push = try session.perform("edit", on: "main")
        #expect(push.navigation?.kind == .push)
        #expect(push.navigation?.page.view == ["original": "ann"])
        #expect(push.navigation?.state.stack == ["main", "editor"])
        _ = events.take()

        let back = try session.perform("save", value: "bob", on: "editor")
        let navigation = try #require(back.navigation)
        #expect(navigation.kind == .back)
        #expect(navigation.unit == "main")
        #expect(navigation.state == NavigationState(stack: ["main"], presented: nil, forward: ["editor"]))
        #expect(navigation.page.view == ["user": "bob"])
        #expect(navigation.page.rev == 1)
        #expect(
            navigation.callbackPatch
                == PagePatch(unit: "main", rev: 1, patch: JSONPatch([.replace(path: pointer("/user"), value: "bob")])))
        #expect(events.all.map(\.summary) == ["patch main 1", "navigation back main"])
        // The editor is kept for `forward`, not released.
        #expect(session.pages.map(\.unit) == ["editor", "main"])
    }

    @Test func backWithoutACallbackLeavesThePageBelowUnchanged() throws {
        let (session, events) = try loggedIn()
        try session.perform("edit", on: "main")
        _ = events.take()
        let back = try session.perform("cancel", on: "editor")
        #expect(back.navigation?.callbackPatch == nil)
        #expect(back.navigation?.page.rev == 0)
        #expect(events.all.map(\.summary) == ["navigation back main"])
    }

    @Test func presentMarksTheTopAsPresented() throws {
        let (session, _) = try loggedIn()
        let result = try session.perform("about", on: "main")
        #expect(result.navigation?.kind == .present)
        #expect(session.navigation == NavigationState(stack: ["main", "about"], presented: "about"))
        let back = try session.navigate(.back)
        #expect(back.navigation?.kind == .back)
        #expect(session.navigation == NavigationState(stack: ["main"], presented: nil, forward: ["about"]))
    }

    @Test func clientBackOnASinglePageDoesNothing() throws {
        let (session, events) = try loggedIn()
        let result = try session.navigate(.back)
        #expect(result.navigation == nil)
        #expect(result.state.stack == ["main"])
        #expect(events.all.isEmpty)
    }

    /// What a server reads before it runs a refused navigation again: whether the navigation left an input in the log.
    @Test func aReceiptSaysWhetherANavigationRecordedAnInput() throws {
        let (session, _) = try loggedIn()
        var refused = InputReceipt()
        let error = #expect(throws: PageError.self) { try session.navigate(.forward, noting: &refused) }
        #expect(error?.code == .nothingForward && !refused.recordedAnInput)
        var unknown = InputReceipt()
        #expect(throws: PageError.self) { try session.navigate(.open("nowhere"), noting: &unknown) }
        #expect(!unknown.recordedAnInput)
        let before = session.inputNumber
        var pushed = InputReceipt()
        try session.navigate(.open("counter"), noting: &pushed)
        #expect(pushed.recordedAnInput && session.inputNumber == before + 1)
        // A receipt keeps what it noted: a later refused step does not clear it.
        #expect(throws: PageError.self) { try session.navigate(.forward, noting: &pushed) }
        #expect(pushed.recordedAnInput)
    }

    @Test func openPopsBackToAUnitOnTheStackOrPushesIt() throws {
        let (session, _) = try loggedIn()
        try session.perform("edit", on: "main")
        let pushed = try session.navigate(.open("counter"))
        #expect(pushed.navigation?.kind == .push)
        #expect(pushed.state.stack == ["main", "editor", "counter"])
        let popped = try session.navigate(.open("main"))
        #expect(popped.navigation?.kind == .back)
        #expect(popped.navigation?.page.unit == "main")
        #expect(popped.state.stack == ["main"])
        // The pages popped wait in the forward list, nearest first.
        #expect(popped.state.forward == ["editor", "counter"])
        #expect(session.pages.map(\.unit) == ["counter", "editor", "main"])
        let same = try session.navigate(.open("main"))
        #expect(same.navigation == nil)
        let unknown = #expect(throws: PageError.self) { try session.navigate(.open("nowhere")) }
        #expect(unknown?.code == .unknownUnit)
    }

    @Test func pushingALiveUnitReleasesItsOldPairAndItsRevisionGoesOn() throws {
        let (session, _) = try loggedIn()
        try session.perform("counter", on: "main")
        try session.perform("increment", on: "counter")
        try session.perform("increment", on: "counter")
        try session.navigate(.back)
        let again = try session.perform("counter", on: "main")
        let page = try #require(again.navigation?.page)
        #expect(page.unit == "counter")
        #expect(page.rev == 3)
        #expect(page.view[pointer("/count")] == 0)
        #expect(session.navigation.stack == ["main", "counter"])
        let next = try session.perform("increment", on: "counter")
        #expect(next.rev == 4)
    }

    @Test func aPageBelowTheTopCannotGoBack() throws {
        let (session, events) = try loggedIn()
        try session.perform("edit", on: "main")
        try session.navigate(.open("counter"))
        #expect(session.navigation.stack == ["main", "editor", "counter"])
        _ = events.take()
        let result = try session.perform("cancel", on: "editor")
        #expect(result.navigation == nil)
        #expect(session.navigation.stack == ["main", "editor", "counter"])
        #expect(events.all.isEmpty)
    }

    @Test func seqNumbersEveryEventInOrder() throws {
        let (session, events) = try loggedIn()
        try session.perform("edit", on: "main")
        try session.perform("save", value: "zed", on: "editor")
        let sequences = events.all.map(\.sequence)
        #expect(sequences == Array((sequences.first ?? 0)...(sequences.last ?? 0)))
        #expect(session.sequence == sequences.last)
    }
}
