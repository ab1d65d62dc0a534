@testable import DemoPages
import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

@Suite struct DemoTests {
    @Test func refreshRetitlesAndRecoloursTheButton() throws {
        let tester = try PageTester(.demo, services: demoServices())
        #expect(tester.view == ["button": ["title": "Tap", "color": "blue"]])
        tester.send(DemoAction.refresh) { $0[at: "/button"] = ["title": "Data refreshed", "color": "orange"] }
        tester.send(DemoAction.refresh)
        #expect(tester.rev == 1)
    }

    @Test func refreshIsOnePatchOfTwoReplaces() throws {
        let tester = try PageTester(.demo, services: demoServices())
        tester.send(
            "refresh",
            patch: [
                .replace(path: try pointer("/button/title"), value: "Data refreshed"),
                .replace(path: try pointer("/button/color"), value: "orange"),
            ])
        #expect(tester.rev == 1)
    }
}
