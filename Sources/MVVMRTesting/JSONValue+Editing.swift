import JSONPatch

extension JSONValue {
    /// The value at `path` of this document; setting writes it (creating missing objects), setting nil
    /// removes it. For describing expected pages in tests:
    ///
    /// ```swift
    /// tester.send("showGreeting") { $0[at: "/greeting"] = "Hello David Blaine" }
    /// ```
    /// An invalid path reads nil and writes nothing.
    public subscript(at path: String) -> JSONValue? {
        get {
            guard let pointer = try? JSONPointer(path) else { return nil }
            return self[pointer]
        }
        set {
            guard let pointer = try? JSONPointer(path) else { return }
            if let newValue {
                if let patched = try? JSONPatch([.add(path: pointer, value: newValue)]).apply(to: self) {
                    self = patched
                } else {
                    // `add` needs the parent to exist: create the missing objects on the way.
                    var current = self
                    var prefix: [String] = []
                    for token in pointer.tokens.dropLast() {
                        prefix.append(token)
                        let parent = JSONPointer(tokens: prefix)
                        if current[parent] == nil,
                            let created = try? JSONPatch([.add(path: parent, value: [:])]).apply(to: current)
                        {
                            current = created
                        }
                    }
                    if let patched = try? JSONPatch([.add(path: pointer, value: newValue)]).apply(to: current) {
                        self = patched
                    }
                }
            } else if let patched = try? JSONPatch([.remove(path: pointer)]).apply(to: self) {
                self = patched
            }
        }
    }
}
