/// The last revision of every unit a session ever bound, kept after its page is released so that a
/// fresh pair goes on from it: a unit's revision never decreases.
///
/// An array searched linearly: a session binds a handful of units, and a dictionary would cost more
/// memory per idle session than the scan costs time.
struct UnitRevisions {
    private struct Entry {
        let unit: String
        var revision: Int
    }

    private var entries: [Entry] = []

    /// Every unit's last revision, in the order first recorded.
    var all: [(unit: String, revision: Int)] {
        entries.map { ($0.unit, $0.revision) }
    }

    /// Makes `unit`'s revision `revision` unless it is higher already.
    mutating func raise(_ unit: String, to revision: Int) {
        if let index = entries.firstIndex(where: { $0.unit == unit }) {
            entries[index].revision = max(entries[index].revision, revision)
        } else {
            entries.append(Entry(unit: unit, revision: revision))
        }
    }

    subscript(unit: String) -> Int? {
        for entry in entries where entry.unit == unit { return entry.revision }
        return nil
    }
}
