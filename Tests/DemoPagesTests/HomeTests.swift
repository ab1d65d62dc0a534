@testable import DemoPages
import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

@Suite struct HomeTests {
    @Test func listsTheOtherPagesInOrder() throws {
        let tester = try PageTester(.home, services: demoServices())
        #expect(tester.view["title"] == "MVVMR demo")
        let items = try #require(tester.view["items"]?.arrayValue)
        #expect(
            items.compactMap { $0["id"]?.stringValue } == [
                "greeting", "demo", "login", "employees", "counters", "dashboard", "board",
            ])
        #expect(
            items.compactMap { $0["title"]?.stringValue } == [
                "Greeting", "Demo", "Login", "Employees", "Counters", "Dashboard", "Board",
            ])
        #expect(items.allSatisfy { ($0["summary"]?.stringValue ?? "").isEmpty == false })
        #expect(tester.view.objectValue?.keys == ["title", "items"])
        #expect(tester.actions == [ActionDescriptor(name: "open", valueType: .string)])
    }

    @Test func openPushesThePageAndLeavesTheMenuAsItIs() throws {
        let tester = try PageTester(.home, services: demoServices())
        tester.send(HomeAction.open, "greeting", navigation: .push("greeting"))
        #expect(tester.session.navigation == NavigationState(stack: ["home", "greeting"], presented: nil))
        let greeting = try #require(tester.session.pages.first { $0.unit == "greeting" })
        #expect(greeting.view["greeting"] == "Say hello to who?")
    }

    @Test func everyMenuItemOpensItsPage() async throws {
        for name in ["greeting", "demo", "login", "employees", "counters", "dashboard"] {
            let tester = try PageTester(.home, services: demoServices())
            tester.send(HomeAction.open, .string(name), navigation: .push(name))
            #expect(tester.session.navigation.stack == ["home", name])
            // The employees page starts loading as it is bound.
            await tester.session.runPendingWork()
            tester.finish()
        }
    }

    @Test func anUnknownNameChangesNothing() throws {
        let tester = try PageTester(.home, services: demoServices())
        tester.send(HomeAction.open, "nowhere")
        tester.send(HomeAction.open, "home")
        #expect(tester.session.navigation.stack == ["home"])
        #expect(tester.rev == 0)
    }
}
