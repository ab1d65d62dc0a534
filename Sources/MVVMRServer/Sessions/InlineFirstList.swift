/// A short list that keeps its first element inline: a list of one allocates nothing, and a list emptied gives its
/// buffer back. For the queues a session usually holds zero or one entry in (inputs waiting for their record to be
/// stored, answers waiting for them), so that an idle session holds no buffer and a lone action allocates none.
struct InlineFirstList<Element> {
    private var head: Element?
    private var rest: [Element] = []

    /// An empty list.
    init() {}

    /// Whether the list holds nothing.
    var isEmpty: Bool { head == nil }

    /// How many elements the list holds.
    var count: Int { head == nil ? 0 : 1 + rest.count }

    /// Adds `element` at the end.
    mutating func append(_ element: Element) {
        if head == nil {
            head = element
        } else {
            rest.append(element)
        }
    }

    /// Removes and returns the first element when `isRemoved` picks it; nil otherwise (or when empty).
    mutating func removeFirst(if isRemoved: (Element) -> Bool) -> Element? {
        guard let first = head, isRemoved(first) else { return nil }
        if rest.isEmpty {
            head = nil
        } else {
            head = rest.removeFirst()
            if rest.isEmpty { rest = [] }
        }
        return first
    }

    /// Removes every element `isRemoved` picks, handing each to `body` in list order; the others keep their order.
    mutating func removeAll(where isRemoved: (Element) -> Bool, handing body: (Element) -> Void) {
        guard let first = head else { return }
        if rest.isEmpty {
            if isRemoved(first) {
                head = nil
                body(first)
            }
            return
        }
        let all = [first] + rest
        head = nil
        rest = []
        for element in all {
            if isRemoved(element) {
                body(element)
            } else {
                append(element)
            }
        }
    }

    /// Empties the list and returns what it held, in order.
    mutating func removeAll() -> [Element] {
        guard let first = head else { return [] }
        let all = [first] + rest
        head = nil
        rest = []
        return all
    }
}

extension InlineFirstList: Sendable where Element: Sendable {}
