@testable import DemoPages
import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

@Suite struct SettingsTests {
    @Test func startsFromTheThemeItWasSent() throws {
        let tester = try PageTester(.settings, services: demoServices(), sending: Theme.dark)
        #expect(tester.view == ["theme": "dark", "themes": ["light", "dark"]])
        #expect(
            tester.actions == [
                ActionDescriptor(name: "theme", valueType: .string), ActionDescriptor(name: "done", valueType: .none),
            ])
    }

    @Test func startsLightWithoutATheme() throws {
        let tester = try PageTester(.settings, services: demoServices())
        #expect(tester.view["theme"] == "light")
    }

    @Test func picksAThemeAndIgnoresOtherNames() throws {
        let tester = try PageTester(.settings, services: demoServices())
        tester.send(SettingsAction.theme, "dark", patch: [.replace(path: try pointer("/theme"), value: "dark")])
        tester.send(SettingsAction.theme, "blue")  // not a theme: nothing changes
        tester.send(SettingsAction.theme, "light") { $0[at: "/theme"] = "light" }
    }

    @Test func aValueThatIsNotAStringIsRefused() throws {
        let tester = try PageTester(.settings, services: demoServices())
        let error = #expect(throws: PageError.self) { try tester.session.perform("theme", value: 1, on: "settings") }
        #expect(error?.code == .invalidValue)
    }

    @Test func doneGoesBackWithTheChosenThemeAsTheCallbackValue() throws {
        // Settings is presented by main, as in the app; its tester follows main's page below.
        let main = try PageTester(.main, services: demoServices(), sending: "david")
        main.send(MainAction.openSettings, navigation: .present("settings"))
        try main.session.perform("theme", value: "dark", on: "settings")
        try main.session.perform("theme", value: "light", on: "settings")
        try main.session.perform("theme", value: "dark", on: "settings")
        let back = try main.session.perform("done", on: "settings")
        #expect(back.navigation?.unit == "main")
        #expect(back.events.count == 2)  // main's callback patch, then the back navigation
        main.advance(by: .zero, navigation: .back("main")) { view in
            view[at: "/theme"] = "dark"
            view[at: "/themeLabel"] = "Theme: dark"
        }
        // Settings waits in the forward list, bound, until a new navigation clears it.
        #expect(main.session.pages.map(\.unit) == ["main", "settings"])
        #expect(main.session.navigation.forward == ["settings"])
    }

    @Test func doneWithoutAChangeReturnsTheSameTheme() throws {
        let main = try PageTester(.main, services: demoServices(), sending: "david")
        main.send(MainAction.openSettings, navigation: .present("settings"))
        try main.session.perform("done", on: "settings")
        main.advance(by: .zero, navigation: .back("main"))  // light again: main does not change
        #expect(main.rev == 0)
    }
}
