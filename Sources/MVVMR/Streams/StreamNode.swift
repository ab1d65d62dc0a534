/// The shared core of every `Signal` and `Driver`: a multicast point in the stream graph.
///
/// A node connects to its upstream when its first observer subscribes and disconnects when its
/// last observer leaves, so however many observers a stream has, its work (the operator closure,
/// the async call, the timer) runs once per upstream event: streams are shared by construction.
/// A node that replays (a Driver's node) keeps its latest value and hands it to each new observer.
///
/// While connected, the upstream holds this node (through the observer closure) and this node holds
/// the upstream subscription; disposing the last downstream subscription breaks that cycle.
@usableFromInline
final class StreamNode<Element> {
    @usableFromInline typealias Observer = (Element) -> Void
    @usableFromInline typealias Connector = (StreamNode<Element>) -> Subscription

    @usableFromInline
    struct Entry {
        @usableFromInline let id: UInt32
        @usableFromInline let observer: Observer

        @inlinable
        init(id: UInt32, observer: @escaping Observer) {
            self.id = id
            self.observer = observer
        }
    }

    /// The first observer, kept apart from the others: most nodes have exactly one, and calling it
    /// needs no array (which, in unspecialized generic code, costs a metadata lookup per emission).
    @usableFromInline var first: Observer?
    @usableFromInline var others: [Entry] = []
    @usableFromInline let connector: Connector?
    @usableFromInline var connection: Subscription?
    /// The observers' ids are 32 bits, wrapping (four of these fields fit two words): a node would need four
    /// billion subscriptions while its oldest observer stays before an id could be given twice.
    @usableFromInline var firstID = UInt32.max
    /// `others.count`, kept apart: reading it needs no metadata of the array, so an emission to one observer
    /// looks nothing up.
    @usableFromInline var otherCount: UInt32 = 0
    @usableFromInline var nextID: UInt32 = 0
    /// Bumped whenever an observer leaves (wrapping), so an emission in progress can skip removed observers.
    @usableFromInline var removals: UInt32 = 0
    @usableFromInline var isConnected = false
    @usableFromInline let replaysLatest: Bool
    @usableFromInline var latest: Element?

    /// A node that runs `connector` on its first observer and disposes what it returned on its last.
    @inlinable
    init(replaysLatest: Bool, connector: @escaping Connector) {
        self.replaysLatest = replaysLatest
        self.connector = connector
    }

    /// A source node: it has no upstream and emits only what is pushed into it.
    @inlinable
    init(sourceReplaying latest: Element?) {
        self.replaysLatest = latest != nil
        self.latest = latest
        self.connector = nil
    }

    /// How many observers are subscribed.
    var observerCount: Int { (first == nil ? 0 : 1) + others.count }

    @inlinable
    func subscribe(_ observer: @escaping Observer) -> Subscription {
        let id = nextID
        nextID &+= 1
        if first == nil, otherCount == 0 {
            first = observer
            firstID = id
        } else {
            others.append(Entry(id: id, observer: observer))
            otherCount &+= 1
        }
        if let connector, !isConnected {
            // Connecting may emit synchronously (a Driver replays its value); the new observer is
            // already listed, so it receives that first value like every other emission.
            isConnected = true
            connection = connector(self)
        } else if replaysLatest, let latest {
            observer(latest)
        }
        return Subscription { [self] in remove(id) }
    }

    @inlinable
    func emit(_ value: Element) {
        if replaysLatest { latest = value }
        if otherCount == 0 {
            first?(value)
            return
        }
        let removalsAtStart = removals
        let current = others
        if let first { first(value) }
        for entry in current {
            if removals != removalsAtStart, !others.contains(where: { $0.id == entry.id }) { continue }
            entry.observer(value)
        }
    }

    @inlinable
    func remove(_ id: UInt32) {
        if id == firstID, first != nil {
            first = nil
            firstID = .max
        } else if let index = others.firstIndex(where: { $0.id == id }) {
            others.remove(at: index)
            otherCount &-= 1
        } else {
            return
        }
        removals &+= 1
        if first == nil, otherCount == 0, connector != nil, isConnected {
            isConnected = false
            // A derived node forgets its value when disconnected: reconnecting recomputes it.
            if replaysLatest { latest = nil }
            let connection = self.connection
            self.connection = nil
            connection?.dispose()
        }
    }
}
