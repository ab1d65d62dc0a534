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
