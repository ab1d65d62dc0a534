/// A list of pages by unit, each marked presented (modal) or pushed: a session's navigation stack, or its forward
/// list. Kept as the units' names in one array, which the session's ``NavigationState`` shares (every navigation event
/// holds one, and an idle session keeps its last in its event log), and the marks in a second array made only once a
/// page is presented (most sessions present none).
struct PageStack: RandomAccessCollection {
    /// One page of the list: the entry a session snapshot writes down.
    typealias Entry = SessionSnapshot.StackEntry

    /// The units, bottom (or nearest) first.
    private(set) var units: [String] = []
    /// Whether each entry is presented; empty while none is.
    private var presentedMarks: [Bool] = []

    /// An empty list.
    init() {}

    /// The list of `entries`, in order.
    init<Entries: Sequence<Entry>>(_ entries: Entries) {
        for entry in entries { append(entry) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { units.count }

    subscript(position: Int) -> Entry {
        Entry(unit: units[position], presented: presentedMarks.isEmpty ? false : presentedMarks[position])
    }

    /// Adds `entry` at the top (or the far end).
    mutating func append(_ entry: Entry) {
        if !presentedMarks.isEmpty {
            presentedMarks.append(entry.presented)
        } else if entry.presented {
            // The first presented entry: the marks are made now, every entry before it pushed.
            presentedMarks = Array(repeating: false, count: units.count) + [true]
        }
        units.append(entry.unit)
    }

    /// Puts `entries` before the entry at `index`, in order.
    mutating func insert<Entries: Collection<Entry>>(contentsOf entries: Entries, at index: Int) {
        var merged = PageStack(self[..<index])
        for entry in entries { merged.append(entry) }
        for entry in self[index...] { merged.append(entry) }
        self = merged
    }

    /// Removes and returns the top entry; the list must not be empty.
    @discardableResult
    mutating func removeLast() -> Entry {
        let last = self[units.count - 1]
        units.removeLast()
        if !presentedMarks.isEmpty { presentedMarks.removeLast() }
        forgetMarksIfNonePresented()
        return last
    }

    /// Removes the bottom (nearest) entry; the list must not be empty.
    mutating func removeFirst() {
        units.removeFirst()
        if !presentedMarks.isEmpty { presentedMarks.removeFirst() }
        forgetMarksIfNonePresented()
    }

    /// Removes the entries from `start` on.
    mutating func removeSubrange(_ range: PartialRangeFrom<Int>) {
        units.removeSubrange(range)
        if !presentedMarks.isEmpty { presentedMarks.removeSubrange(range) }
        forgetMarksIfNonePresented()
    }

    /// Drops the marks once no entry is presented, so that a list without a presented page keeps no second array.
    private mutating func forgetMarksIfNonePresented() {
        if !presentedMarks.isEmpty, !presentedMarks.contains(true) { presentedMarks = [] }
    }

    /// Removes every entry that `shouldBeRemoved` picks.
    mutating func removeAll(where shouldBeRemoved: (Entry) -> Bool) {
        self = PageStack(filter { !shouldBeRemoved($0) })
    }

    /// Removes every entry.
    mutating func removeAll() {
        self = PageStack()
    }
}
