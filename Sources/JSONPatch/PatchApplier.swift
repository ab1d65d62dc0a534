/// The primitive mutations behind ``JSONPatch/apply(to:)`` and ``JSONPatch/apply(toDocument:)``, each
/// returning how to take itself back.
///
/// Navigation is iterative and moves each container out of its parent while it is mutated
/// (leaving `.null` behind briefly) so the container is uniquely referenced and copy-on-write
/// never copies it.
enum PatchApplier {
    /// How to take back one primitive mutation, recorded as it is made so that a patch applied in place
    /// can be rolled back when a later operation fails.
    enum Undo {
        /// The whole document was replaced or removed: put this back.
        case restoreDocument(JSONValue)
        /// A member or element was added at this pointer (array indices resolved, never `-`): remove it.
        case remove(JSONPointer)
        /// The value at this pointer was overwritten: write the old one back.
        case replace(JSONPointer, JSONValue)
        /// A member or element was removed: insert it again, a member at its old position.
        case insert(JSONPointer, JSONValue, memberPosition: Int?)
    }

    static func apply(_ operation: PatchOperation, to document: inout JSONValue, undo: inout [Undo]) throws(JSONPatchError) {
        switch operation {
        case .add(let path, let value):
            undo.append(try add(value, at: path, in: &document))
        case .remove(let path):
            undo.append(try remove(at: path, in: &document).undo)
        case .replace(let path, let value):
            undo.append(try replace(at: path, with: value, in: &document))
        case .move(let from, let path):
            if from == path {
                // Still required to exist (RFC 6902 §4.4).
                guard document[from] != nil else { throw missing(from, role: "from") }
                return
            }
            if from.isProperPrefix(of: path) {
                throw JSONPatchError(code: .moveIntoDescendant, message: "cannot move \(from) into its own descendant \(path)")
            }
            let removed = try remove(at: from, in: &document, role: "from")
            undo.append(removed.undo)
            undo.append(try add(removed.value, at: path, in: &document))
        case .copy(let from, let path):
            guard let value = document[from] else { throw missing(from, role: "from") }
            undo.append(try add(value, at: path, in: &document))
        case .test(let path, let value):
            guard let actual = document[path] else { throw missing(path, role: "path") }
            guard actual == value else {
                throw JSONPatchError(code: .testFailed, message: "test failed at \(quoted(path)): expected \(abbreviated(value)), found \(abbreviated(actual))")
            }
        }
    }

    /// Takes back mutations recorded by `apply`, newest first. Each step inverts one that succeeded on
    /// this very document, so none can fail; a step that did would be a bug, and is skipped.
    static func rollBack(_ undo: [Undo], in document: inout JSONValue) {
        for step in undo.reversed() {
            switch step {
            case .restoreDocument(let value):
                document = value
            case .remove(let path):
                _ = try? remove(at: path, in: &document)
            case .replace(let path, let value):
                _ = try? replace(at: path, with: value, in: &document)
            case .insert(let path, let value, let memberPosition):
                try? withParent(of: path, in: &document) { (parent: inout JSONValue, token: String) throws(JSONPatchError) in
                    if var object = parent.takeObject() {
                        object.insertValue(value, forKey: token, at: memberPosition ?? object.count)
                        parent = .object(object)
                    } else if var array = parent.takeArray() {
                        if let index = JSONPointer.arrayIndex(token), index <= array.count { array.insert(value, at: index) }
                        parent = .array(array)
                    }
                }
            }
        }
    }

    static func add(_ value: JSONValue, at path: JSONPointer, in document: inout JSONValue) throws(JSONPatchError) -> Undo {
        guard !path.tokens.isEmpty else {
            defer { document = value }
            return .restoreDocument(document)
        }
        return try withParent(of: path, in: &document) { (parent: inout JSONValue, token: String) throws(JSONPatchError) -> Undo in
            if var object = parent.takeObject() {
                defer { parent = .object(object) }
                let previous = object.updateValue(value, forKey: token)
                return previous.map { .replace(path, $0) } ?? .remove(path)
            }
            if var array = parent.takeArray() {
                defer { parent = .array(array) }
                let index: Int
                if token == "-" {
                    index = array.count
                } else {
                    guard let parsed = JSONPointer.arrayIndex(token) else { throw badIndex(token, path) }
                    guard parsed <= array.count else {
                        throw JSONPatchError(code: .invalidArrayIndex, message: "index \(token) in \(quoted(path)) is past the end of an array of \(array.count)")
                    }
                    index = parsed
                }
                array.insert(value, at: index)
                return .remove(token == "-" ? JSONPointer(tokens: path.tokens.dropLast() + [String(index)]) : path)
            }
            throw JSONPatchError(code: .pathNotFound, message: "the parent of \(quoted(path)) is not an object or array")
        }
    }

    static func remove(at path: JSONPointer, in document: inout JSONValue, role: String = "path") throws(JSONPatchError)
        -> (value: JSONValue, undo: Undo)
    {
        guard !path.tokens.isEmpty else {
            // Removing the whole document leaves nothing; JSON has no "absent" document, so null stands in.
            let removed = document
            document = .null
            return (removed, .restoreDocument(removed))
        }
        return try withParent(of: path, in: &document, role: role) {
            (parent: inout JSONValue, token: String) throws(JSONPatchError) -> (value: JSONValue, undo: Undo) in
            if var object = parent.takeObject() {
                defer { parent = .object(object) }
                guard let position = object.position(ofKey: token) else { throw missing(path, role: role) }
                let removed = object.removeValue(forKey: token) ?? .null
                return (removed, .insert(path, removed, memberPosition: position))
            }
            if var array = parent.takeArray() {
                defer { parent = .array(array) }
                guard let index = JSONPointer.arrayIndex(token) else { throw badIndex(token, path) }
                guard index < array.count else { throw missing(path, role: role) }
                let removed = array.remove(at: index)
                return (removed, .insert(path, removed, memberPosition: nil))
            }
            throw missing(path, role: role)
        }
    }

    static func replace(at path: JSONPointer, with value: JSONValue, in document: inout JSONValue) throws(JSONPatchError) -> Undo {
        guard !path.tokens.isEmpty else {
            defer { document = value }
            return .restoreDocument(document)
        }
        return try withParent(of: path, in: &document) { (parent: inout JSONValue, token: String) throws(JSONPatchError) -> Undo in
            if var object = parent.takeObject() {
                defer { parent = .object(object) }
                guard object[token] != nil else { throw missing(path, role: "path") }
                return .replace(path, object.updateValue(value, forKey: token) ?? .null)
            }
            if var array = parent.takeArray() {
                defer { parent = .array(array) }
                guard let index = JSONPointer.arrayIndex(token) else { throw badIndex(token, path) }
                guard index < array.count else { throw missing(path, role: "path") }
                var previous = value
                swap(&previous, &array[index])
                return .replace(path, previous)
            }
            throw missing(path, role: "path")
        }
    }

    /// Walks to the container holding the last token of `path` and runs `body` on it in place.
    ///
    /// Iterative, so a pointer as deep as the document allows costs no call stack: each
    /// container on the way down is moved out of its parent onto a stack (its slot holds
    /// `.null` meanwhile, which keeps every container uniquely referenced and copy-free), and
    /// the path is reassembled on the way back up, on success and failure alike. Containers are
    /// moved with `takeObject()`/`takeArray()`, never bound by a `switch` on the value in place: a
    /// switch keeps its own reference to what it matched, and the mutation would then copy.
    private static func withParent<Result>(
        of path: JSONPointer,
        in document: inout JSONValue,
        role: String = "path",
        _ body: (inout JSONValue, String) throws(JSONPatchError) -> Result
    ) throws(JSONPatchError) -> Result {
        guard let lastToken = path.tokens.last else { throw missing(path, role: role) }
        // Containers moved out on the way down, outermost first, in typed stacks so that
        // popping yields a uniquely referenced value.
        var isObject: [Bool] = []
        var objects: [JSONObject] = []
        var memberPositions: [Int] = []
        var arrays: [[JSONValue]] = []
        var arrayIndices: [Int] = []
        var current = JSONValue.null
        swap(&current, &document)
        var outcome: Swift.Result<Result, JSONPatchError>?
        for token in path.tokens.dropLast() {
            if var object = current.takeObject() {
                guard let position = object.position(ofKey: token) else {
                    current = .object(object)
                    outcome = .failure(missing(path, role: role))
                    break
                }
                swap(&current, &object.members[position].value)
                isObject.append(true)
                objects.append(object)
                memberPositions.append(position)
            } else if var array = current.takeArray() {
                guard let index = JSONPointer.arrayIndex(token), index < array.count else {
                    let failure = JSONPointer.arrayIndex(token) == nil ? badIndex(token, path) : missing(path, role: role)
                    current = .array(array)
                    outcome = .failure(failure)
                    break
                }
                swap(&current, &array[index])
                isObject.append(false)
                arrays.append(array)
                arrayIndices.append(index)
            } else {
                outcome = .failure(missing(path, role: role))
                break
            }
        }
        if outcome == nil {
            do {
                outcome = .success(try body(&current, lastToken))
            } catch {
                outcome = .failure(error)
            }
        }
        // Put every container back, innermost first.
        while let containerIsObject = isObject.popLast() {
            if containerIsObject {
                var object = objects.removeLast()
                swap(&current, &object.members[memberPositions.removeLast()].value)
                current = .object(object)
            } else {
                var array = arrays.removeLast()
                swap(&current, &array[arrayIndices.removeLast()])
                current = .array(array)
            }
        }
        swap(&current, &document)
        switch outcome {
        case .success(let result)?:
            return result
        case .failure(let error)?:
            throw error
        case nil:
            throw missing(path, role: role)
        }
    }

    private static func missing(_ path: JSONPointer, role: String) -> JSONPatchError {
        JSONPatchError(code: .pathNotFound, message: "'\(role)' location \(quoted(path)) does not exist")
    }

    private static func badIndex(_ token: String, _ path: JSONPointer) -> JSONPatchError {
        JSONPatchError(code: .invalidArrayIndex, message: "'\(token)' in \(quoted(path)) is not a valid array index")
    }

    /// The JSON text of `value`, cut short so error messages stay readable for big values.
    private static func abbreviated(_ value: JSONValue) -> String {
        let text = value.jsonString
        return text.count <= 120 ? text : String(text.prefix(117)) + "..."
    }

    private static func quoted(_ path: JSONPointer) -> String {
        "\"\(path)\""
    }
}

extension JSONValue {
    /// Moves the object out of this value, leaving `.null`, so that the caller holds its only reference
    /// and changes it without a copy; nil (and this value unchanged) when it is not an object.
    ///
    /// A `switch self` with `case .object(var object)` followed by `self = .null` does not do this: the switch's
    /// subject is a copy that lives to the end of the switch, so the first change copies the whole object.
    @inlinable
    public mutating func takeObject() -> JSONObject? {
        guard case .object = self else { return nil }
        let taken = self
        self = .null
        guard case .object(let object) = consume taken else { return nil }
        return object
    }

    /// Moves the array out of this value, leaving `.null`, so that the caller holds its only reference
    /// and changes it without a copy; nil (and this value unchanged) when it is not an array.
    @inlinable
    public mutating func takeArray() -> [JSONValue]? {
        guard case .array = self else { return nil }
        let taken = self
        self = .null
        guard case .array(let array) = consume taken else { return nil }
        return array
    }
}
