import JSONPatch

/// A JSON Schema checker for the keywords the protocol's components use (type, required, properties,
/// additionalProperties, items, enum, const, oneOf, allOf, not, minimum, maximum, pattern as a prefix-free
/// digit check, and contentSchema for an event's data), resolving `$ref`s among the components.
struct SchemaValidator {
    /// The components by name.
    let components: JSONObject

    /// The problems found with `value` against `schema`, each with its JSON Pointer; empty when it is valid.
    func problems(_ value: JSONValue, _ schema: JSONValue, at path: String = "") -> [String] {
        guard case .object(let rules) = schema else { return ["\(path): schema is not an object"] }
        var found: [String] = []
        if case .string(let reference)? = rules["$ref"] {
            let prefix = "#/components/schemas/"
            guard reference.hasPrefix(prefix), let target = components[String(reference.dropFirst(prefix.count))] else {
                return ["\(path): unresolved $ref \(reference)"]
            }
            found += problems(value, target, at: path)
        }
        if let type = rules["type"] {
            let names: [String] = type.arrayValue?.compactMap(\.stringValue) ?? [type.stringValue].compactMap { $0 }
            if !names.contains(where: { Self.has(value, type: $0) }) { found.append("\(path): not of type \(names)") }
        }
        if let options = rules["enum"]?.arrayValue, !options.contains(value) { found.append("\(path): \(value) not in enum") }
        if let constant = rules["const"], constant != value { found.append("\(path): \(value) is not \(constant)") }
        if let minimum = rules["minimum"]?.doubleValue, let number = value.doubleValue, number < minimum {
            found.append("\(path): below \(minimum)")
        }
        if let maximum = rules["maximum"]?.doubleValue, let number = value.doubleValue, number > maximum {
            found.append("\(path): above \(maximum)")
        }
        if case .object(let members) = value {
            for name in rules["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where members[name] == nil {
                found.append("\(path): '\(name)' is required")
            }
            let properties = rules["properties"]?.objectValue ?? [:]
            for (name, member) in members {
                if let property = properties[name] {
                    found += problems(member, property, at: path + "/" + name)
                } else if let additional = rules["additionalProperties"] {
                    if additional == .bool(false) {
                        found.append("\(path): '\(name)' is not allowed")
                    } else if additional.objectValue != nil {
                        found += problems(member, additional, at: path + "/" + name)
                    }
                }
            }
        }
        if case .array(let elements) = value, let items = rules["items"] {
            for (index, element) in elements.enumerated() { found += problems(element, items, at: path + "/\(index)") }
        }
        if case .string(let text) = value, let content = rules["contentSchema"] {
            if let parsed = try? JSONValue(parsing: text) {
                found += problems(parsed, content, at: path + "(content)")
            } else {
                found.append("\(path): content is not JSON")
            }
        }
        if case .string(let text) = value, rules["pattern"] == "^[0-9]+$", text.isEmpty || !text.allSatisfy(\.isASCIIDigit) {
            found.append("\(path): '\(text)' is not digits")
        }
        if let branches = rules["oneOf"]?.arrayValue {
            let matching = branches.filter { problems(value, $0, at: path).isEmpty }.count
            if matching != 1 { found.append("\(path): matches \(matching) branches of oneOf") }
        }
        for branch in rules["allOf"]?.arrayValue ?? [] { found += problems(value, branch, at: path) }
        if let excluded = rules["not"], problems(value, excluded, at: path).isEmpty { found.append("\(path): matches 'not'") }
        return found
    }

    private static func has(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): true
        case ("integer", .int): true
        case ("integer", .double(let number)): number.rounded() == number
        case ("number", .int), ("number", .double): true
        default: false
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
