import JSONPatch

extension JSONValue {
    /// Writes `value` at `tokens`, creating missing objects on the way.
    ///
    /// Containers are taken out of the enum (``JSONValue/takeObject()``) before they are changed, and a member or an
    /// element is changed where it is, so a document that is not shared is changed in place rather than copied level by
    /// level.
    /// - Returns: how many tokens lead to the highest value that was created or changed (a write
    ///   below a missing object reports that object, so its patch is one `add` the client can apply)
    ///   and the value it replaced there (nil when it created it), or nil when the path runs through a
    ///   scalar or an array index out of range; then nothing changed.
    mutating func write(_ value: JSONValue, at tokens: ArraySlice<String>) -> (depth: Int, replaced: JSONValue?)? {
        guard let token = tokens.first else {
            let replaced = self
            self = value
            return (0, replaced)
        }
        let rest = tokens.dropFirst()
        if var object = takeObject() {
            defer { self = .object(object) }
            // The member is changed where it is (found once, and not copied out and back).
            if let written = object.modifyValue(forKey: token, { child in child.write(value, at: rest) }) {
                return written.map { ($0.depth + 1, $0.replaced) }
            }
            var created = JSONValue.object(JSONObject())
            if created.write(value, at: rest) == nil {
                return nil
            }
            object[token] = created
            return (1, nil)
        }
        if var array = takeArray() {
            defer { self = .array(array) }
            let index: Int
            if token == "-" {
                index = array.count
            } else if let parsed = Int(token), parsed >= 0, parsed <= array.count {
                index = parsed
            } else {
                return nil
            }
            if index == array.count {
                // Appending: only a whole new element can be added at the end.
                guard rest.isEmpty else { return nil }
                array.append(value)
                return (1, nil)
            }
            let written = array[index].write(value, at: rest)
            return written.map { ($0.depth + 1, $0.replaced) }
        }
        return nil
    }
}

extension JSONValue {
    /// Whether the value is neither an array nor an object.
    var isScalar: Bool {
        switch self {
        case .array, .object: return false
        default: return true
        }
    }
}
