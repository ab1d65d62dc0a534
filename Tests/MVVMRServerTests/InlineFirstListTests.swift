import Testing

@testable import MVVMRServer

/// The inline-first list behaves as an array would: order kept, removals by predicate, emptied at once.
@Suite struct InlineFirstListTests {
    /// The elements of `list`, in order, read by emptying a copy.
    private func elements(of list: InlineFirstList<Int>) -> [Int] {
        var copy = list
        return copy.removeAll()
    }

    @Test func appendedElementsComeOutInOrder() {
        var list = InlineFirstList<Int>()
        #expect(list.isEmpty && list.count == 0)
        for number in 1...5 { list.append(number) }
        #expect(!list.isEmpty && list.count == 5)
        #expect(elements(of: list) == [1, 2, 3, 4, 5])
        #expect(list.removeAll() == [1, 2, 3, 4, 5])
        #expect(list.isEmpty && list.removeAll() == [])
    }

    @Test func removeFirstTakesOnlyAPickedHead() {
        var list = InlineFirstList<Int>()
        #expect(list.removeFirst(if: { _ in true }) == nil)
        for number in [1, 2, 3, 7, 4] { list.append(number) }
        var taken: [Int] = []
        while let number = list.removeFirst(if: { $0 <= 3 }) { taken.append(number) }
        // Stops at the first element not picked, even with a picked one after it.
        #expect(taken == [1, 2, 3])
        #expect(elements(of: list) == [7, 4])
        #expect(list.removeFirst(if: { $0 == 7 }) == 7)
        #expect(list.removeFirst(if: { $0 == 4 }) == 4)
        #expect(list.isEmpty)
        list.append(9)
        #expect(elements(of: list) == [9])
    }

    @Test func removeAllWherePicksAnywhereAndKeepsTheRestInOrder() {
        // Against an array doing the same, over every subset of eight elements picked by a mask.
        for mask in 0..<256 {
            var list = InlineFirstList<Int>()
            for number in 0..<8 { list.append(number) }
            let picked = { (number: Int) in mask & (1 << number) != 0 }
            var handed: [Int] = []
            list.removeAll(where: picked, handing: { handed.append($0) })
            #expect(handed == (0..<8).filter(picked))
            #expect(elements(of: list) == (0..<8).filter { !picked($0) })
            #expect(list.count == 8 - handed.count)
        }
        var single = InlineFirstList<Int>()
        single.append(1)
        single.removeAll(where: { $0 == 2 }, handing: { _ in Issue.record("nothing was picked") })
        #expect(elements(of: single) == [1])
        single.removeAll(where: { $0 == 1 }, handing: { #expect($0 == 1) })
        #expect(single.isEmpty)
    }
}
