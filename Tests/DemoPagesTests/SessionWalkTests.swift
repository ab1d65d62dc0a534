@testable import DemoPages
import JSONPatch
import MVVMR
import MVVMRTesting
import Synchronization
import Testing

/// The whole demo in one session, as the server drives it: home → login → main → settings → back →
/// logout.
@Suite struct SessionWalkTests {
    @Test func walksFromHomeThroughLoginMainAndSettingsToLogout() async throws {
        let session = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .virtual)
        defer { session.releaseAll() }
        let start = try session.start()
        #expect(start.navigation?.unit == "home")

        let open = try session.perform("open", value: "login", on: "home")
        #expect(open.navigation?.kind == .push)
        #expect(session.navigation == NavigationState(stack: ["home", "login"], presented: nil))

        try session.perform("username", value: "david", on: "login")
        let ready = try session.perform("password", value: "blaine123", on: "login")
        #expect(ready.patch?.operations.count == 2)  // message and canSubmit
        let submit = try session.perform("submit", on: "login")
        #expect(submit.navigation == nil)  // the check is async
        await session.runPendingWork()
        #expect(session.navigation == NavigationState(stack: ["home", "login", "main"], presented: nil))
        let main = try session.snapshot(of: "main")
        #expect(
            main.view == ["user": "david", "welcome": "Welcome, david", "theme": "light", "themeLabel": "Theme: light"])

        let present = try session.perform("openSettings", on: "main")
        #expect(present.navigation?.kind == .present)
        #expect(present.navigation?.page.view == ["theme": "light", "themes": ["light", "dark"]])
        #expect(
            session.navigation == NavigationState(stack: ["home", "login", "main", "settings"], presented: "settings"))

        try session.perform("theme", value: "dark", on: "settings")
        let back = try session.perform("done", on: "settings")
        #expect(back.navigation?.kind == .back)
        #expect(back.navigation?.unit == "main")
        #expect(back.navigation?.page.view["themeLabel"] == "Theme: dark")
        #expect(back.navigation?.page.rev == 1)
        #expect(
            session.navigation == NavigationState(stack: ["home", "login", "main"], presented: nil, forward: ["settings"]))

        let logout = try session.perform("logout", on: "main")
        #expect(logout.navigation?.kind == .root)
        #expect(
            logout.navigation?.page.view == [
                "username": "", "canSubmit": false, "message": "Enter your username", "error": nil,
            ])
        #expect(session.navigation == NavigationState(stack: ["login"], presented: nil))
        #expect(session.pages.map(\.unit) == ["login"])
        #expect(session.pendingWorkCount == 0)
    }

    @Test func everyPageOfTheAppBindsWithTheAppsServices() async throws {
        let session = PageSession(
            registry: DemoApp.registry,
            services: DemoApp.services(employeeLatency: .zero, authLatency: .zero, dataDirectory: dataDirectory),
            clock: .virtual)
        defer { session.releaseAll() }
        for unit in DemoApp.units {
            let snapshot = try session.snapshot(of: unit.name)
            #expect(snapshot.unit == unit.name)
            #expect(snapshot.view.objectValue?.isEmpty == false)
        }
        await session.runPendingWork()
        #expect(try session.snapshot(of: "employees").view["count"] == 24)
    }

    @Test func theAppListsItsUnitsAndTheirActions() {
        #expect(DemoApp.root == .home)
        let actions = Dictionary(
            uniqueKeysWithValues: DemoApp.units.map { unit in
                (unit.name, unit.actions.map { "\($0.name):\($0.valueType.rawValue)" })
            })
        #expect(
            actions == [
                "home": ["open:string"],
                "greeting": ["showGreeting:none"],
                "demo": ["refresh:none"],
                "login": ["username:string", "password:string", "submit:none"],
                "main": ["openSettings:none", "logout:none"],
                "settings": ["theme:string", "done:none"],
                "employees": ["reload:none"],
                "counters": ["increment:int", "loadMore:none"],
                "dashboard": ["quote.shuffle:none", "stats.reset:none"],
                "board": ["draft:string", "post:none"],
            ])
    }

    @Test func theDashboardTicksInRealTime() async throws {
        let seen = Mutex<[Int]>([])
        let session = PageSession(registry: DemoApp.registry, services: demoServices(), clock: .realTime) { event in
            if case .patch(let patch) = event.kind, patch.unit == "dashboard" { seen.withLock { $0.append(patch.rev) } }
        }
        defer { session.releaseAll() }
        try session.start(at: .dashboard)
        // The first tick is due after one second; wait for it (up to 10 s on a busy machine).
        for _ in 0..<100 where seen.withLock({ $0.isEmpty }) {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(seen.withLock { $0 }.first == 1)
        let view = try session.snapshot(of: "dashboard").view
        let ticks = view[at: "/clock/ticks"]?.intValue ?? 0
        #expect(ticks >= 1)
        #expect(view[at: "/stats/ticks"]?.intValue == ticks)
    }
}
