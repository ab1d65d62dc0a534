import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

@Suite struct PageTesterTopicTests {
    @Test func aDeliveredMessageIsCheckedLikeAnyStep() throws {
        let tester = try PageTester(.notes)
        tester.receive("hello", on: .notes) { $0[at: "/last"] = "hello" }
        withKnownIssue {
            tester.receive("again", on: .notes)
        }
    }

    @Test func whatThePagePublishedIsTakenInOrder() throws {
        let tester = try PageTester(.notes)
        tester.send("say", "one")
        tester.send("say", "two")
        #expect(tester.published(on: .notes) == ["one", "two"])
        #expect(tester.published(on: .notes).isEmpty)
    }

    @Test func aPublicationNeverTakenFailsTheTest() throws {
        let tester = try PageTester(.notes)
        tester.send("say", "forgotten")
        withKnownIssue {
            tester.finish()
        }
    }

    @Test func aMessageOnATopicNoPageListensToIsAnIssue() throws {
        let tester = try PageTester(.tally)
        withKnownIssue {
            tester.receive("nobody", on: .notes)
        }
    }
}

struct BadTopicView: View {
    func bind(_ output: NotesOutput, to page: Page) {
        page.bind(output.last, at: "/last")
    }

    func input(from actions: Actions<NamedAction>) -> NotesInput { NotesInput(say: actions.signal("say", of: String.self)) }
}

final class BadTopicViewModel: ViewModel {
    private let notes: Signal<String>
    init(context: UnitContext) { notes = context.messages(on: Topic<String>("not a name!")) }

    func transform(_ input: NotesInput) -> NotesOutput {
        NotesOutput(last: notes.asDriver(startingWith: ""), said: input.say)
    }
}

struct BadPublishView: View {
    func input(from actions: Actions<NamedAction>) -> NotesInput { NotesInput(say: actions.signal("say", of: String.self)) }

    func bind(_ output: NotesOutput, to page: Page) {
        page.publish(output.said, on: Topic<String>("mvvmr.topic.x"))
    }
}

@Suite struct InvalidTopicNameTests {
    @Test(arguments: [
        UnitCase("badListen", view: BadTopicView.self, viewModel: BadTopicViewModel.self),
        UnitCase("badPublish", view: BadPublishView.self, viewModel: NotesViewModel.self),
    ])
    func aPageUsingATopicWhoseNameIsNotValidFailsToBind(unit: UnitCase) {
        let session = PageSession(registry: UnitRegistry(root: unit, units: []), clock: .virtual)
        defer { session.releaseAll() }
        #expect(throws: PageError.self) { try session.start() }
        do {
            try session.start()
        } catch {
            #expect(error.code == .bindingFailed)
            #expect(error.message.contains("is not a topic name"))
        }
    }
}
