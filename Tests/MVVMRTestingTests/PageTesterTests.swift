import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

@Suite struct PageTesterTests {
    @Test func startsFromTheFirstSnapshot() throws {
        let tester = try PageTester(.tally)
        #expect(tester.view == ["count": 0, "loaded": "idle", "seconds": 0])
        #expect(tester.rev == 0)
        #expect(tester.actions.map(\.name) == ["increment", "load", "next"])
    }

    @Test func sentValueReachesTheViewModel() throws {
        let tester = try PageTester(.tally, sending: 41)
        tester.send("increment") { $0[at: "/count"] = 42 }
    }

    @Test func sentJSONValueReachesTheViewModel() throws {
        let value: JSONValue? = .double(9)
        let tester = try PageTester(.tally, sending: value)
        tester.send("increment") { $0[at: "/count"] = 10 }
    }

    @Test func aValueJSONCannotHoldIsAnErrorNotASilentNil() {
        #expect(throws: JSONValueCodingError.self) { try PageTester(.tally, sending: Double.nan) }
    }

    @Test func assertedChangesPass() throws {
        let tester = try PageTester(.tally)
        tester.send("increment") { $0[at: "/count"] = 1 }
        tester.send("increment") { $0[at: "/count"] = 2 }
        #expect(tester.rev == 2)
    }

    @Test func anUnassertedChangeFailsTheTest() throws {
        let tester = try PageTester(.tally)
        withKnownIssue {
            tester.send("increment")
        }
        // The tester moves on with the actual page.
        #expect(tester.view[at: "/count"] == 1)
    }

    @Test func aWrongExpectationFailsTheTest() throws {
        let tester = try PageTester(.tally)
        withKnownIssue {
            tester.send("increment") { $0[at: "/count"] = 5 }
        }
    }

    @Test func expectingAChangeThatDoesNotHappenFailsTheTest() throws {
        let tester = try PageTester(.greetingLike)
        withKnownIssue {
            tester.send("noop") { _ in }
        }
    }

    @Test func exactPatchesAreChecked() throws {
        let tester = try PageTester(.tally)
        let count = try JSONPointer("/count")
        tester.send("increment", patch: [.replace(path: count, value: 1)])
        withKnownIssue {
            tester.send("increment", patch: [.replace(path: count, value: 3)])
        }
    }

    @Test func virtualTimeDrivesTimers() throws {
        let tester = try PageTester(.tally)
        tester.advance(by: .milliseconds(999))
        tester.advance(by: .milliseconds(1)) { $0[at: "/seconds"] = 1 }
        withKnownIssue {
            tester.advance(by: .seconds(2))
        }
        #expect(tester.rev == 3)
    }

    @Test func asyncWorkRunsWhenTheTestSays() async throws {
        let tester = try PageTester(.tally)
        tester.send("load")
        await tester.runPendingWork { $0[at: "/loaded"] = "loaded" }
    }

    @Test func asyncWorkLeftPendingFailsTheTest() throws {
        let tester = try PageTester(.tally)
        tester.send("load")
        withKnownIssue {
            tester.finish()
        }
    }

    @Test func navigationsMustBeAsserted() throws {
        let tester = try PageTester(.tally)
        tester.send("next", navigation: .push("other"))
        #expect(tester.session.navigation.stack == ["tally", "other"])
        withKnownIssue {
            tester.send("next")
        }
        withKnownIssue {
            tester.send("increment", navigation: .push("other")) { $0[at: "/count"] = 1 }
        }
    }

    @Test func unknownActionsAreIssues() throws {
        let tester = try PageTester(.tally)
        withKnownIssue {
            tester.send("wave")
        }
    }

    @Test func editingSubscriptCreatesAndRemovesValues() {
        var view: JSONValue = ["a": 1]
        view[at: "/b/c"] = "deep"
        #expect(view == ["a": 1, "b": ["c": "deep"]])
        view[at: "/a"] = nil
        #expect(view == ["b": ["c": "deep"]])
        #expect(view[at: "not a pointer"] == nil)
    }
}

// A page whose action never changes anything.
struct NoopInput { let noop: Signal<Void> }
struct NoopOutput { let text: Driver<String> }
struct NoopView: View {
    func input(from actions: Actions<NamedAction>) -> NoopInput { NoopInput(noop: actions.signal("noop")) }
    func bind(_ output: NoopOutput, to page: Page) { page.bind(output.text, at: "/text") }
}
final class NoopViewModel: ViewModel {
    init(context: UnitContext) {}
    func transform(_ input: NoopInput) -> NoopOutput {
        NoopOutput(text: input.noop.map { "same" }.asDriver(startingWith: "same"))
    }
}
extension UnitCase {
    static let greetingLike = UnitCase("noop", view: NoopView.self, viewModel: NoopViewModel.self)
}
