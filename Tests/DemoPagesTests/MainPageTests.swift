@testable import DemoPages
import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

@Suite struct MainPageTests {
    @Test func welcomesTheUserItWasSent() throws {
        let tester = try PageTester(.main, services: demoServices(), sending: "david")
        #expect(
            tester.view == [
                "user": "david", "welcome": "Welcome, david", "theme": "light", "themeLabel": "Theme: light",
            ])
    }

    @Test func withoutAUserItWelcomesAGuest() throws {
        let tester = try PageTester(.main, services: demoServices())
        #expect(tester.view["welcome"] == "Welcome, guest")
    }

    @Test func openSettingsPresentsSettingsWithTheCurrentTheme() throws {
        let tester = try PageTester(.main, services: demoServices(), sending: "david")
        tester.send(MainAction.openSettings, navigation: .present("settings"))
        #expect(tester.session.navigation == NavigationState(stack: ["main", "settings"], presented: "settings"))
        let settings = try #require(tester.session.pages.first { $0.unit == "settings" })
        #expect(settings.view == ["theme": "light", "themes": ["light", "dark"]])
    }

    @Test func theThemeSettingsReturnsIsShown() throws {
        let tester = try PageTester(.main, services: demoServices(), sending: "david")
        tester.send(MainAction.openSettings, navigation: .present("settings"))
        try tester.session.perform("theme", value: "dark", on: "settings")
        let back = try tester.session.perform("done", on: "settings")
        #expect(back.navigation?.kind == .back)
        // The callback's patch reaches main before the back navigation.
        #expect(
            back.navigation?.callbackPatch?.patch
                == JSONPatch([
                    .replace(path: try pointer("/theme"), value: "dark"),
                    .replace(path: try pointer("/themeLabel"), value: "Theme: dark"),
                ]))
        tester.advance(by: .zero, navigation: .back("main")) { view in
            view[at: "/theme"] = "dark"
            view[at: "/themeLabel"] = "Theme: dark"
        }
        #expect(tester.session.navigation == NavigationState(stack: ["main"], presented: nil, forward: ["settings"]))
        // Settings opens again from the theme chosen.
        tester.send(MainAction.openSettings, navigation: .present("settings"))
        #expect(tester.session.pages.first { $0.unit == "settings" }?.view["theme"] == "dark")
    }

    @Test func logoutMakesLoginTheRoot() throws {
        let tester = try PageTester(.main, services: demoServices(), sending: "david")
        tester.send(MainAction.logout, navigation: .root("login"))
        #expect(tester.session.navigation == NavigationState(stack: ["login"], presented: nil))
        #expect(tester.session.pages.map(\.unit) == ["login"])
    }
}
