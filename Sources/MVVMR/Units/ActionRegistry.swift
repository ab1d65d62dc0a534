import JSONPatch

/// The declared actions of one page and where each one's values go.
///
/// An array searched linearly rather than a dictionary: pages declare a handful of actions, and for
/// a handful a scan of short strings is both faster than hashing and a fraction of the memory.
final class ActionRegistry {
    struct Entry {
        let name: String
        let valueType: ActionValueType
        var deliveries: [(JSONValue) -> Void]
    }

    /// The declarations in the order the View made them.
    private(set) var entries: [Entry] = []

    /// The declared actions, in declaration order.
    var descriptors: [ActionDescriptor] {
        entries.map { ActionDescriptor(name: $0.name, valueType: $0.valueType) }
    }

    func entry(named name: String) -> Entry? {
        for entry in entries where entry.name == name { return entry }
        return nil
    }

    func declare(_ name: String, valueType: ActionValueType, delivery: @escaping (JSONValue) -> Void) {
        if let index = entries.firstIndex(where: { $0.name == name }) {
            // A second declaration of the same action receives the same values; the first one's
            // value type stays the one clients see.
            entries[index].deliveries.append(delivery)
            return
        }
        entries.append(Entry(name: name, valueType: valueType, deliveries: [delivery]))
    }
}
