import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

// The greeting page tested as a client uses it: the exhaustive checks, and the patch form.

@Suite struct GreetingTests {
    let services: Services = {
        var services = Services()
        services.register(Person(firstName: "David", lastName: "Blaine"))
        return services
    }()

    @Test func greetsThePersonWhenAsked() throws {
        let tester = try PageTester(.greeting, services: services)
        #expect(tester.view == ["greeting": "Say hello to who?"])

        tester.send("showGreeting") {
            $0[at: "/greeting"] = "Hello David Blaine"
        }
        // Greeting again changes nothing: no patch, same revision.
        tester.send("showGreeting")
        #expect(tester.rev == 1)
    }

    @Test func greetingPatchIsOneReplace() throws {
        let tester = try PageTester(.greeting, services: services)
        let greeting = try JSONPointer("/greeting")
        tester.send("showGreeting", patch: [.replace(path: greeting, value: "Hello David Blaine")])
    }
}
