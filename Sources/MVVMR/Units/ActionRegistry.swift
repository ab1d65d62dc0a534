import JSONPatch

/// The declared actions of one page and where each one's values go.
///
/// An array searched linearly rather than a dictionary: pages declare a handful of actions, and for
/// a handful a scan of short strings is both faster than hashing and a fraction of the memory.
final class ActionRegistry {
    /// What limits an action's values beyond their JSON type: made only for an action that has such a limit, so
    /// that every bound page's entry for a plain action is small.
    final class Constraints {
        /// For a string action: the most characters its value may have (nil: no limit but the server's).
        let maxLength: Int?
        /// For a value of a `Decodable` type: its JSON Schema, as the unit's schema lists it.
        let schema: JSONValue?
        /// For a value of a `Decodable` type: whether a value of the right JSON type decodes.
        let validate: ((JSONValue) -> Bool)?

        init(maxLength: Int?, schema: JSONValue?, validate: ((JSONValue) -> Bool)?) {
            self.maxLength = maxLength
            self.schema = schema
            self.validate = validate
        }
    }

    struct Entry {
        let name: String
        let constraints: Constraints?
        /// The first declaration's delivery, and those of any later declarations of the same action (usually none).
        let delivery: (JSONValue) -> Void
        var moreDeliveries: [(JSONValue) -> Void] = []
        /// (Last: its byte fits the padding at the end.)
        let valueType: ActionValueType

        /// For a string action: the most characters its value may have (nil: no limit but the server's).
        var maxLength: Int? { constraints?.maxLength }
        /// For a value of a `Decodable` type: its JSON Schema, as the unit's schema lists it.
        var schema: JSONValue? { constraints?.schema }
        /// For a value of a `Decodable` type: whether a value of the right JSON type decodes.
        var validate: ((JSONValue) -> Bool)? { constraints?.validate }

        /// Hands `value` to every declaration's delivery, in declaration order.
        func deliver(_ value: JSONValue) {
            delivery(value)
            for more in moreDeliveries { more(value) }
        }
    }

    /// The declarations in the order the View made them: the first one held here, the others in `rest`. Most pages
    /// declare one action or a few: a page with one keeps no array (an idle page's registry is one object).
    private var first: Entry?
    private var rest: [Entry] = []

    /// The declarations in the order the View made them.
    var entries: [Entry] {
        guard let first else { return [] }
        return [first] + rest
    }

    /// The declared actions, in declaration order.
    var descriptors: [ActionDescriptor] {
        entries.map { ActionDescriptor(name: $0.name, valueType: $0.valueType, schema: $0.schema) }
    }

    func entry(named name: String) -> Entry? {
        if let first, first.name == name { return first }
        for entry in rest where entry.name == name { return entry }
        return nil
    }

    /// Whether `value` (of the entry's type already) is within the entry's limit.
    static func isWithinLimit(_ value: JSONValue, of entry: Entry) -> Bool {
        if let validate = entry.validate, !validate(value) { return false }
        guard let maxLength = entry.maxLength, let text = value.stringValue else { return true }
        // Counting stops at the limit: a long value costs no more than the limit.
        var count = 0
        for _ in text {
            count += 1
            if count > maxLength { return false }
        }
        return true
    }

    func declare(
        _ name: String, valueType: ActionValueType, maxLength: Int? = nil, schema: JSONValue? = nil,
        validate: ((JSONValue) -> Bool)? = nil, delivery: @escaping (JSONValue) -> Void
    ) {
        // A second declaration of the same action receives the same values; the first one's value type stays the
        // one clients see.
        if first?.name == name {
            first?.moreDeliveries.append(delivery)
            return
        }
        if let index = rest.firstIndex(where: { $0.name == name }) {
            rest[index].moreDeliveries.append(delivery)
            return
        }
        let constraints =
            maxLength == nil && schema == nil && validate == nil
            ? nil : Constraints(maxLength: maxLength, schema: schema, validate: validate)
        let entry = Entry(name: name, constraints: constraints, delivery: delivery, valueType: valueType)
        if first == nil {
            first = entry
        } else {
            rest.append(entry)
        }
    }
}
