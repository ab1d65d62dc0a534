/// One RFC 6902 JSON Patch operation.
public enum PatchOperation: Hashable, Sendable {
    /// Inserts `value` at `path` (an object member is set; an array element is inserted before
    /// the index, or appended for `-`).
    case add(path: JSONPointer, value: JSONValue)
    /// Removes the value at `path`, which must exist. Removing the root (`""`) leaves `null`,
    /// since a JSON document cannot be absent.
    case remove(path: JSONPointer)
    /// Replaces the value at `path`, which must exist.
    case replace(path: JSONPointer, value: JSONValue)
    /// Removes the value at `from` and adds it at `path`.
    case move(from: JSONPointer, path: JSONPointer)
    /// Adds a copy of the value at `from` at `path`.
    case copy(from: JSONPointer, path: JSONPointer)
    /// Fails unless the value at `path` equals `value`.
    case test(path: JSONPointer, value: JSONValue)

    /// The target location of the operation.
    public var path: JSONPointer {
        switch self {
        case .add(let path, _), .remove(let path), .replace(let path, _),
             .move(_, let path), .copy(_, let path), .test(let path, _):
            return path
        }
    }

    /// The RFC 6902 name of the operation: `add`, `remove`, `replace`, `move`, `copy` or `test`.
    public var name: String {
        switch self {
        case .add: return "add"
        case .remove: return "remove"
        case .replace: return "replace"
        case .move: return "move"
        case .copy: return "copy"
        case .test: return "test"
        }
    }

    /// The RFC 6902 JSON form: `{"op":…,"from":…,"path":…,"value":…}` with only the members the operation uses.
    public var json: JSONValue {
        var object = JSONObject()
        object["op"] = .string(name)
        switch self {
        case .add(let path, let value), .replace(let path, let value), .test(let path, let value):
            object["path"] = .string(path.description)
            object["value"] = value
        case .remove(let path):
            object["path"] = .string(path.description)
        case .move(let from, let path), .copy(let from, let path):
            object["from"] = .string(from.description)
            object["path"] = .string(path.description)
        }
        return .object(object)
    }

    /// Appends the compact text of ``json`` to `buffer` without building the JSON tree first (same members,
    /// same order, same bytes).
    /// - Parameter buffer: the buffer to append UTF-8 bytes to.
    public func encode(into buffer: inout [UInt8]) {
        write(into: &buffer)
    }

    /// Reads one operation from its RFC 6902 JSON form.
    ///
    /// Members other than `op`, `path`, `from` and `value` are ignored, as RFC 6902 §4 requires.
    ///
    /// - Parameters:
    ///   - json: An object such as `{"op":"add","path":"/a","value":1}`.
    ///   - index: The operation's position in its patch, for error reporting.
    /// - Throws: ``JSONPatchError`` with code ``JSONPatchError/Code/invalidOperation`` or
    ///   ``JSONPatchError/Code/invalidPointer``.
    public init(json: JSONValue, index: Int? = nil) throws(JSONPatchError) {
        guard case .object(let object) = json else {
            throw JSONPatchError(code: .invalidOperation, operationIndex: index, message: "an operation must be a JSON object")
        }
        guard case .string(let name)? = object["op"] else {
            throw JSONPatchError(code: .invalidOperation, operationIndex: index, message: "missing or non-string 'op' member")
        }
        func pointer(_ member: String) throws(JSONPatchError) -> JSONPointer {
            guard let value = object[member] else {
                throw JSONPatchError(code: .invalidOperation, operationIndex: index, message: "'\(name)' requires a '\(member)' member")
            }
            guard case .string(let text) = value else {
                throw JSONPatchError(code: .invalidOperation, operationIndex: index, message: "'\(member)' must be a string, not \(value.jsonString)")
            }
            do {
                return try JSONPointer(text)
            } catch {
                throw JSONPatchError(code: .invalidPointer, operationIndex: index, message: "'\(member)' is not a JSON Pointer: \(error.message)")
            }
        }
        func value() throws(JSONPatchError) -> JSONValue {
            guard let value = object["value"] else {
                throw JSONPatchError(code: .invalidOperation, operationIndex: index, message: "'\(name)' requires a 'value' member")
            }
            return value
        }
        switch name {
        case "add": self = .add(path: try pointer("path"), value: try value())
        case "remove": self = .remove(path: try pointer("path"))
        case "replace": self = .replace(path: try pointer("path"), value: try value())
        case "move": self = .move(from: try pointer("from"), path: try pointer("path"))
        case "copy": self = .copy(from: try pointer("from"), path: try pointer("path"))
        case "test": self = .test(path: try pointer("path"), value: try value())
        default:
            throw JSONPatchError(code: .invalidOperation, operationIndex: index, message: "unknown op '\(name)'")
        }
    }
}

extension PatchOperation: CustomStringConvertible {
    /// The compact JSON form of the operation.
    public var description: String {
        json.jsonString
    }
}
