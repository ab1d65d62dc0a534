/// The live pages of a session, one per unit, looked up by unit name.
///
/// A session has a handful of pages, so a linear scan beats hashing the unit name on every action
/// and costs less memory than a dictionary.
struct LivePages {
    private(set) var values: [BoundPage] = []

    subscript(name: String) -> BoundPage? {
        get {
            for page in values where page.unit.name == name { return page }
            return nil
        }
        set {
            let index = values.firstIndex { $0.unit.name == name }
            switch (index, newValue) {
            case let (index?, page?): values[index] = page
            case let (index?, nil): values.remove(at: index)
            case let (nil, page?): values.append(page)
            case (nil, nil): break
            }
        }
    }

    @discardableResult
    mutating func removeValue(forKey name: String) -> BoundPage? {
        guard let index = values.firstIndex(where: { $0.unit.name == name }) else { return nil }
        return values.remove(at: index)
    }

    mutating func removeAll() {
        values.removeAll()
    }
}
