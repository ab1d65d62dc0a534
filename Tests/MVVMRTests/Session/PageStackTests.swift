@testable import MVVMR
import Testing

/// The list of a session's navigation stack and forward list: the same operations as an array of entries, checked
/// against one, with the presented marks kept only while a page is presented.
@Suite struct PageStackTests {
    private typealias Entry = PageStack.Entry

    @Test func everyOperationLeavesWhatAnArrayOfEntriesWould() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var stack = PageStack()
            var model: [Entry] = []
            for _ in 0..<12 {
                let entry = Entry(unit: "u\(Int.random(in: 0..<6, using: &generator))", presented: Bool.random(using: &generator))
                switch Int.random(in: 0..<7, using: &generator) {
                case 0, 1, 2:
                    stack.append(entry)
                    model.append(entry)
                case 3 where !model.isEmpty:
                    #expect(stack.removeLast() == model.removeLast())
                case 4 where !model.isEmpty:
                    stack.removeFirst()
                    model.removeFirst()
                case 5:
                    let index = Int.random(in: 0...model.count, using: &generator)
                    stack.insert(contentsOf: [entry, Entry(unit: "x", presented: false)], at: index)
                    model.insert(contentsOf: [entry, Entry(unit: "x", presented: false)], at: index)
                case 6:
                    let unit = entry.unit
                    stack.removeAll { $0.unit == unit }
                    model.removeAll { $0.unit == unit }
                default:
                    let index = Int.random(in: 0...model.count, using: &generator)
                    stack.removeSubrange(index...)
                    model.removeSubrange(index...)
                }
                #expect(Array(stack) == model)
                #expect(stack.units == model.map(\.unit))
            }
        }
    }

    @Test func theNavigationStateSharesTheUnitsOfTheStack() throws {
        let (session, _) = makeSession(root: .greeting)
        try session.start()
        let first = session.navigation, second = session.navigation
        #expect(first.stack == ["greeting"])
        #expect(first.presented == nil)
        // Two readings hand out the stack's own array, not a copy each.
        let firstBase = first.stack.withUnsafeBufferPointer { $0.baseAddress }
        let secondBase = second.stack.withUnsafeBufferPointer { $0.baseAddress }
        #expect(firstBase == secondBase)
    }
}
