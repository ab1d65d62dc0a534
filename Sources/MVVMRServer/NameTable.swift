/// Values found by a name that a request carries (a unit's, an action's), in a table made once and only read after.
///
/// A server's units and a unit's actions are few, and every page read and action looks one up: hashing the name
/// (SipHash, as a `Dictionary` does) cost about 450 instructions a lookup, more than the rest of the bookkeeping
/// around it. Up to ``linearLimit`` names are compared one by one, those of the name's length first (a name found
/// costs a few dozen instructions); a name not found is compared with every one, which is bounded by the limit. A
/// larger table keeps a dictionary. Names compare as `String`s do, so the table finds what a `Dictionary` would.
struct NameTable<Value: Sendable>: Sendable {
    /// The most names compared one by one; a larger table hashes.
    static var linearLimit: Int { 16 }

    private let names: [String]
    /// Each name's length in UTF-8 bytes: a name sent as the table holds it has the same length.
    private let lengths: [Int]
    private let values: [Value]
    /// Name to position, only when there are more than ``linearLimit`` names.
    private let positions: [String: Int]?

    /// A table of `entries`; a name given twice keeps its first value.
    /// - Parameter entries: the names and their values.
    init(_ entries: [(name: String, value: Value)]) {
        var names: [String] = []
        var values: [Value] = []
        var positions: [String: Int] = [:]
        for (name, value) in entries where positions[name] == nil {
            positions[name] = names.count
            names.append(name)
            values.append(value)
        }
        self.names = names
        lengths = names.map(\.utf8.count)
        self.values = values
        self.positions = names.count > Self.linearLimit ? positions : nil
    }

    /// How many names the table holds.
    var count: Int { values.count }

    /// The value named `name`, if any.
    subscript(name: String) -> Value? {
        if let positions { return positions[name].map { values[$0] } }
        let length = name.utf8.count
        // A name sent as the table holds it has its length, and when short its very bits (a string of up to 15 bytes
        // is held inline), which `==` compares first.
        for index in lengths.indices where lengths[index] == length && names[index] == name {
            return values[index]
        }
        // Only then the others: `String` compares by canonical equivalence, so an accent sent combined rather than
        // composed is the same name, as a `Dictionary` would find it. Most misses are names the table does not hold.
        for index in lengths.indices where lengths[index] != length && names[index] == name {
            return values[index]
        }
        return nil
    }
}
