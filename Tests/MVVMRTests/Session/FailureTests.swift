import JSONPatch
import MVVMR
import Testing

@Suite struct FailureTests {
    @Test func aThrowingViewModelIsAnErrorAndTheSessionLivesOn() throws {
        let (session, events) = makeSession()
        try session.start()
        _ = events.take()
        let error = #expect(throws: PageError.self) { try session.snapshot(of: "throwing") }
        #expect(error?.code == .bindingFailed)
        #expect(events.all.isEmpty)
        #expect(session.pages.map(\.unit) == ["greeting"])
        let result = try session.perform("showGreeting", on: "greeting")
        #expect(result.rev == 1)
    }

    @Test func aRouteToAThrowingViewModelIsReportedAndChangesNoStack() throws {
        let (session, _) = makeSession()
        let error = #expect(throws: PageError.self) { try session.start(at: .throwing) }
        #expect(error?.code == .bindingFailed)
        #expect(session.navigation.stack.isEmpty)
        #expect(session.sequence == 0)
    }

    @Test func anInvalidBindingPathFailsTheBindingInsteadOfTrapping() throws {
        let (session, _) = makeSession()
        let error = #expect(throws: PageError.self) { try session.snapshot(of: "badPath") }
        #expect(error?.code == .bindingFailed)
    }

    @Test func aMissingServiceFailsTheBinding() throws {
        let (session, _) = makeSession(services: Services())
        let error = #expect(throws: PageError.self) { try session.snapshot(of: "needsService") }
        #expect(error?.code == .missingService)
        let greeting = #expect(throws: PageError.self) { try session.start() }
        #expect(greeting?.code == .missingService)
    }
}
