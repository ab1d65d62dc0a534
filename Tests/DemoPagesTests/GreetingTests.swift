@testable import DemoPages
import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

@Suite struct GreetingTests {
    @Test func asksUntilTheGreetingIsShown() throws {
        let tester = try PageTester(.greeting, services: demoServices())
        #expect(
            tester.view == ["person": ["firstName": "David", "lastName": "Blaine"], "greeting": "Say hello to who?"])
        tester.send(GreetingAction.showGreeting) { $0[at: "/greeting"] = "Hello David Blaine" }
        // Asking again changes nothing.
        tester.send(GreetingAction.showGreeting)
        #expect(tester.rev == 1)
    }

    @Test func greetsWhoeverThePersonServiceHolds() throws {
        var services = demoServices()
        services.register(Person(firstName: "Ada", lastName: "Lovelace"))
        let tester = try PageTester(.greeting, services: services)
        #expect(tester.view["person"] == ["firstName": "Ada", "lastName": "Lovelace"])
        tester.send(GreetingAction.showGreeting, patch: [.replace(path: try pointer("/greeting"), value: "Hello Ada Lovelace")])
    }

    @Test func withoutAPersonTheBindingFails() {
        #expect(throws: PageError.self) { try PageTester(.greeting, services: Services()) }
    }
}
