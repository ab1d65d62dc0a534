import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

// The effects of the guide (docs/GUIDE.md, section 6), exactly as they are shown there.

@Suite struct LookupTests {
    let services: Services = {
        var services = Services()
        services.register(FixedDirectory() as any Directory, as: (any Directory).self)
        return services
    }()

    @Test func theLatestSearchWins() async throws {
        let tester = try PageTester(.lookup, services: services)
        tester.send(LookupAction.search, "a") { view in
            view[at: "/query"] = "a"
            view[at: "/searching"] = true
        }
        tester.send(LookupAction.search, " ada ") { $0[at: "/query"] = "ada" }
        // Nothing has answered yet; the first search was replaced, so only the second one's answer is applied.
        await tester.runPendingWork { view in
            view[at: "/people"] = ["Ada Lovelace"]
            view[at: "/searching"] = false
            view[at: "/status"] = "1 found"
        }
        tester.send(LookupAction.open, 0, navigation: .push("editor"))
        #expect(try tester.session.snapshot(of: "editor").view["original"] == "Ada Lovelace")
    }

    @Test func aCancelledSearchIsNeverApplied() async throws {
        let tester = try PageTester(.lookup, services: services)
        tester.send(LookupAction.search, "alan") { view in
            view[at: "/query"] = "alan"
            view[at: "/searching"] = true
        }
        tester.send(LookupAction.cancel) { view in
            view[at: "/searching"] = false
            view[at: "/status"] = "Cancelled"
        }
        await tester.runPendingWork()  // the cancelled answer changes nothing
    }

    @Test func aFailureIsAnEvent() async throws {
        let tester = try PageTester(.lookup, services: services)
        tester.send(LookupAction.search, "fail") { view in
            view[at: "/query"] = "fail"
            view[at: "/searching"] = true
        }
        await tester.runPendingWork { view in
            view[at: "/searching"] = false
            view[at: "/status"] = "Failed: Unavailable()"
        }
    }
}
