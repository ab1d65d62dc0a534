// The test of the guide's todo page (docs/GUIDE.md, section 4), exactly as it is shown there.

import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

@Suite struct TodoTests {
    @Test func addsTogglesAndFilters() throws {
        let tester = try PageTester(.todo)
        #expect(tester.view == ["todos": [], "filter": "all", "shown": []])

        let milk: JSONValue = ["id": 1, "title": "Buy milk", "done": false]
        tester.send(TodoAction.add, ["title": "  Buy milk "]) { view in
            view[at: "/todos/0"] = milk
            view[at: "/shown/0"] = milk
        }
        tester.send(TodoAction.add, ["title": " "])  // a blank title adds nothing: no patch
        // Rows are diffed by id: toggling one is one operation in each list.
        tester.send(
            TodoAction.toggle, 1,
            patch: [
                .replace(path: try JSONPointer("/todos/0/done"), value: true),
                .replace(path: try JSONPointer("/shown/0/done"), value: true),
            ])
        tester.send(TodoAction.filter, "open") { view in
            view[at: "/filter"] = "open"
            view[at: "/shown"] = []
        }
        tester.send(TodoAction.toggle, 99)  // no such todo: nothing changes
    }

    @Test func refusesValuesThatDoNotDecode() throws {
        let tester = try PageTester(.todo)
        let refused: [(TodoAction, JSONValue)] = [(.add, ["name": "Buy milk"]), (.add, "Buy milk"), (.filter, "later")]
        for (action, value) in refused {
            // A refusal changes nothing: sendRefused checks that too.
            #expect(tester.sendRefused(action, value)?.code == .invalidValue)
        }
        #expect(tester.rev == 0)
    }
}
