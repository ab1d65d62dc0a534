/// An RFC 6902 JSON Patch: a sequence of operations applied in order, atomically.
///
/// ```swift
/// let old: JSONValue = ["rows": [["id": 1, "title": "A"]]]
/// let new: JSONValue = ["rows": [["id": 1, "title": "B"]]]
/// let patch = JSONPatch.diff(from: old, to: new)
/// patch.json.jsonString   // [{"op":"replace","path":"/rows/0/title","value":"B"}]
/// try patch.apply(to: old) == new  // true
/// ```
public struct JSONPatch: Hashable, Sendable {
    /// The operations, applied first to last.
    public var operations: [PatchOperation]

    /// Creates a patch from operations.
    ///
    /// - Parameter operations: The operations, in application order.
    public init(_ operations: [PatchOperation] = []) {
        self.operations = operations
    }

    /// Reads a patch from its RFC 6902 JSON form: an array of operation objects.
    ///
    /// - Parameter json: The patch document.
    /// - Throws: ``JSONPatchError`` if it is not an array of well-formed operations.
    public init(json: JSONValue) throws(JSONPatchError) {
        guard case .array(let elements) = json else {
            throw JSONPatchError(code: .invalidOperation, message: "a JSON Patch must be a JSON array of operations")
        }
        var operations: [PatchOperation] = []
        operations.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            operations.append(try PatchOperation(json: element, index: index))
        }
        self.operations = operations
    }

    /// The RFC 6902 JSON form: an array of operation objects.
    public var json: JSONValue {
        .array(operations.map { $0.json })
    }

    /// Appends the compact text of ``json`` to `buffer` without building the JSON tree first.
    /// - Parameter buffer: the buffer to append UTF-8 bytes to.
    public func encode(into buffer: inout [UInt8]) {
        write(into: &buffer)
    }

    /// The compact JSON text of the patch as UTF-8 bytes.
    public var jsonBytes: [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(32 + 64 * operations.count)
        encode(into: &buffer)
        return buffer
    }
}

extension JSONPatch: RandomAccessCollection {
    /// The position of the first operation (always 0).
    public var startIndex: Int { operations.startIndex }

    /// The position one past the last operation.
    public var endIndex: Int { operations.endIndex }

    /// The operation at `position`.
    ///
    /// - Parameter position: A valid index of ``operations``.
    public subscript(position: Int) -> PatchOperation {
        operations[position]
    }
}

extension JSONPatch: CustomStringConvertible {
    /// The compact JSON form of the patch.
    public var description: String {
        json.jsonString
    }
}
