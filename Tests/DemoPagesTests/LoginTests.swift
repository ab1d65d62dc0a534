@testable import DemoPages
import JSONPatch
import MVVMR
import MVVMRTesting
import Synchronization
import Testing

@Suite struct LoginTests {
    @Test func startsEmptyAndAsksForTheUsername() throws {
        let tester = try PageTester(.login, services: demoServices())
        #expect(tester.view == ["username": "", "canSubmit": false, "message": "Enter your username", "error": nil])
        #expect(
            tester.actions == [
                ActionDescriptor(name: "username", valueType: .string),
                ActionDescriptor(name: "password", valueType: .string),
                ActionDescriptor(name: "submit", valueType: .none),
            ])
    }

    @Test func theMessageSaysWhatIsMissingAndSubmitIsEnabledOnlyWhenNothingIs() throws {
        let tester = try PageTester(.login, services: demoServices())
        tester.send(LoginAction.username, "david") { view in
            view[at: "/username"] = "david"
            view[at: "/message"] = "The password needs at least 6 characters"
        }
        tester.send(LoginAction.password, "12345")
        tester.send(LoginAction.password, "123456") { view in
            view[at: "/message"] = "Ready to sign in"
            view[at: "/canSubmit"] = true
        }
        tester.send(LoginAction.username, "") { view in
            view[at: "/username"] = ""
            view[at: "/message"] = "Enter your username"
            view[at: "/canSubmit"] = false
        }
        // The password is never written into the view.
        #expect(!tester.view.jsonString.contains("123456"))
    }

    @Test func submittingAnIncompleteFormDoesNothing() throws {
        let tester = try PageTester(.login, services: demoServices())
        tester.send(LoginAction.username, "david") { view in
            view[at: "/username"] = "david"
            view[at: "/message"] = "The password needs at least 6 characters"
        }
        tester.send(LoginAction.password, "short")
        tester.send(LoginAction.submit)
        #expect(tester.session.pendingWorkCount == 0)
    }

    @Test func wrongCredentialsShowAnErrorUntilTheNextEdit() async throws {
        let tester = try PageTester(.login, services: demoServices())
        tester.send(LoginAction.username, "david") { view in
            view[at: "/username"] = "david"
            view[at: "/message"] = "The password needs at least 6 characters"
        }
        tester.send(LoginAction.password, "wrong-password") { view in
            view[at: "/message"] = "Ready to sign in"
            view[at: "/canSubmit"] = true
        }
        tester.send(LoginAction.submit)  // the check runs asynchronously
        #expect(tester.session.pendingWorkCount == 1)
        await tester.runPendingWork { $0[at: "/error"] = "Wrong username or password" }
        tester.send(LoginAction.password, "blaine12") { $0[at: "/error"] = JSONValue.null }
        tester.send(LoginAction.submit)
        await tester.runPendingWork { $0[at: "/error"] = "Wrong username or password" }
        tester.send(LoginAction.username, "davi") { view in
            view[at: "/username"] = "davi"
            view[at: "/error"] = JSONValue.null
        }
    }

    @Test func theRightCredentialsPushMainSendingTheUser() async throws {
        let tester = try PageTester(.login, services: demoServices())
        tester.send(LoginAction.username, "david") { view in
            view[at: "/username"] = "david"
            view[at: "/message"] = "The password needs at least 6 characters"
        }
        tester.send(LoginAction.password, "blaine123") { view in
            view[at: "/message"] = "Ready to sign in"
            view[at: "/canSubmit"] = true
        }
        tester.send(LoginAction.submit)
        await tester.runPendingWork(navigation: .push("main"))
        #expect(tester.session.navigation == NavigationState(stack: ["login", "main"], presented: nil))
        let main = try #require(tester.session.pages.first { $0.unit == "main" })
        #expect(main.view["user"] == "david")
        #expect(main.view["welcome"] == "Welcome, david")
    }

    @Test func anEditWhileTheCheckRunsCancelsIt() async throws {
        let tester = try PageTester(.login, services: demoServices())
        tester.send(LoginAction.username, "david") { view in
            view[at: "/username"] = "david"
            view[at: "/message"] = "The password needs at least 6 characters"
        }
        tester.send(LoginAction.password, "blaine123") { view in
            view[at: "/message"] = "Ready to sign in"
            view[at: "/canSubmit"] = true
        }
        tester.send(LoginAction.submit)
        #expect(tester.session.pendingWorkCount == 1)
        tester.send(LoginAction.username, "davidx") { $0[at: "/username"] = "davidx" }
        #expect(tester.session.pendingWorkCount == 0)
        await tester.runPendingWork()  // nothing left to answer: no navigation, no change
        #expect(tester.session.navigation.stack == ["login"])
    }

    @Test func theAuthServiceIsAskedWithWhatWasTyped() async throws {
        let auth = RecordingAuth()
        var services = demoServices()
        services.register(auth as any AuthService, as: (any AuthService).self)
        let tester = try PageTester(.login, services: services)
        tester.send(LoginAction.username, "ann") { view in
            view[at: "/username"] = "ann"
            view[at: "/message"] = "The password needs at least 6 characters"
        }
        tester.send(LoginAction.password, "secret!") { view in
            view[at: "/message"] = "Ready to sign in"
            view[at: "/canSubmit"] = true
        }
        tester.send(LoginAction.submit)
        await tester.runPendingWork(navigation: .push("main"))
        #expect(auth.attempts == ["ann:secret!"])
        #expect(tester.session.pages.first { $0.unit == "main" }?.view["user"] == "ann")
    }

    @Test func theViewModelAloneValidatesAndRoutes() async throws {
        let scheduler = Scheduler.virtual()
        let viewModel = try LoginViewModel(
            context: UnitContext(unit: "login", services: demoServices(), scheduler: scheduler))
        let events = Relay<LoginEvent>()
        let output = viewModel.transform(events.signal)
        let messages = StreamRecorder(output.state.map(\.message))
        let canSubmit = StreamRecorder(output.state.map(\.canSubmit))
        let routes = StreamRecorder(
            output.routes.map { "\($0.kind.rawValue) \($0.unit?.name ?? "-") \($0.value?.stringValue ?? "-")" })
        messages.expect(["Enter your username"])
        canSubmit.expect([false])
        events.accept(.username("david"))
        messages.expect(["The password needs at least 6 characters"])
        canSubmit.expect([false])
        events.accept(.password("blaine123"))
        messages.expect(["Ready to sign in"])
        canSubmit.expect([true])
        events.accept(.submit)
        routes.expect([])
        await scheduler.runPendingWork()
        routes.expect(["push main david"])
    }

    @Test func theDemoAuthServiceAcceptsOnlyDavid() async {
        let auth = DemoAuthService(latency: .zero)
        #expect(await auth.signIn(username: "david", password: "blaine123"))
        #expect(await !auth.signIn(username: "david", password: "blaine124"))
        #expect(await !auth.signIn(username: "David", password: "blaine123"))
        #expect(await !auth.signIn(username: "", password: ""))
    }
}

/// An auth service that accepts everyone and remembers who asked.
final class RecordingAuth: AuthService {
    private let recorded = Mutex<[String]>([])

    var attempts: [String] { recorded.withLock { $0 } }

    func signIn(username: String, password: String) async -> Bool {
        recorded.withLock { $0.append("\(username):\(password)") }
        return true
    }
}
