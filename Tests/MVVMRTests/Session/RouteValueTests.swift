import JSONPatch
import MVVMR
import Testing

@Suite struct RouteValueTests {
    func rosterSession() throws -> (PageSession, RecordedEvents) {
        let events = RecordedEvents()
        let session = PageSession(
            registry: UnitRegistry(root: .roster, units: [.roster, .profile]), clock: .virtual,
            eventSink: { events.append($0) })
        try session.start()
        _ = events.take()
        return (session, events)
    }

    @Test func routesCarryTheirValueAsJSON() {
        let route = Route.push(.profile, sending: Member(name: "Ada", age: 36))
        #expect(route.value == ["name": "Ada", "age": 36])
        #expect(route.value?.jsonString == #"{"name":"Ada","age":36}"#)
        #expect(route.valueEncodingFailure == nil)
        #expect(Route.push(.profile).value == nil)
        #expect(Route.back(returning: [1, 2]).value == [1, 2])
        #expect(Route.back.value == nil)
        #expect(Route.root(.profile, sending: JSONValue.null).value == .null)
    }

    @Test func aSentCodableValueReachesTheNewPage() throws {
        let (session, _) = try rosterSession()
        let result = try session.perform("open", value: "Ada", on: "roster")
        #expect(result.navigationFailure == nil)
        #expect(result.navigation?.page.view == ["name": "Ada", "age": 36])
        #expect(session.navigation.stack == ["roster", "profile"])
    }

    @Test func aSentValueOfAnotherTypeReadsAsNil() throws {
        let scheduler = Scheduler.virtual()
        let context = try UnitContext(unit: "profile", scheduler: scheduler, sending: "text")
        #expect(context.sentValue(as: String.self) == "text")
        #expect(context.sentValue(as: Member.self) == nil)
        #expect(context.sentValue(as: Int.self) == nil)
        let member = UnitContext(unit: "profile", scheduler: scheduler, sentValue: ["name": "Bo", "age": 3])
        #expect(member.sentValue(as: Member.self) == Member(name: "Bo", age: 3))
        #expect(UnitContext(unit: "profile", scheduler: scheduler).sentValue(as: String.self) == nil)
        #expect(throws: JSONValueCodingError.self) {
            try UnitContext(unit: "profile", scheduler: scheduler, sending: Reading(score: .nan))
        }
    }

    @Test func startSendsAJSONValue() throws {
        let session = PageSession(registry: UnitRegistry(root: .profile, units: [.roster, .profile]), clock: .virtual)
        let result = try session.start(sending: ["name": "Cy", "age": 5])
        #expect(result.navigation?.page.view == ["name": "Cy", "age": 5])
    }

    @Test func aCallbackValueDecodesOnThePageBelow() throws {
        let (session, events) = try rosterSession()
        try session.perform("open", value: "Ada", on: "roster")
        _ = events.take()
        let back = try session.perform("done", on: "profile")
        #expect(back.navigation?.kind == .back)
        #expect(
            back.navigation?.callbackPatch
                == PagePatch(
                    unit: "roster", rev: 1, patch: JSONPatch([.replace(path: pointer("/last"), value: "Ada 37")])))
    }

    @Test func callbackValuesThatDoNotDecodeAreSkipped() throws {
        let (session, _) = try rosterSession()
        try session.perform("open", value: "Ada", on: "roster")
        let back = try session.perform("doneWithText", on: "profile")
        #expect(back.navigation?.kind == .back)
        #expect(back.navigation?.callbackPatch == nil)
        #expect(back.navigation?.page.view == ["last": "none"])
    }

    @Test func aForwardRouteWithAValueJSONCannotHoldFailsLikeABinding() throws {
        let route = Route.push(.profile, sending: Reading(score: .infinity))
        #expect(route.value == nil)
        #expect(route.unit?.name == "profile")
        #expect(route.valueEncodingFailure?.code == .invalidValue)
        #expect(route.valueEncodingFailure?.codingPath == "/score")

        let (session, events) = try rosterSession()
        let result = try session.perform("openWithInfinity", on: "roster")
        let failure = try #require(result.navigationFailure)
        #expect(failure.code == .bindingFailed)
        #expect(
            failure.message.hasPrefix("the value sent to profile cannot be encoded as JSON: invalid_value at /score"))
        #expect(result.navigation == nil)
        #expect(session.navigation.stack == ["roster"])
        #expect(session.pages.map(\.unit) == ["roster"])
        #expect(events.all.isEmpty)
    }

    @Test func backWithAValueJSONCannotHoldStillGoesBackWithoutIt() throws {
        let route = Route.back(returning: Reading(score: .nan))
        #expect(route.kind == .back)
        #expect(route.value == nil)
        #expect(route.valueEncodingFailure?.codingPath == "/score")

        let (session, _) = try rosterSession()
        try session.perform("open", value: "Ada", on: "roster")
        let back = try session.perform("doneWithNaN", on: "profile")
        #expect(back.navigation?.kind == .back)
        #expect(back.navigation?.callbackPatch == nil)
        #expect(session.navigation.stack == ["roster"])
    }
}
