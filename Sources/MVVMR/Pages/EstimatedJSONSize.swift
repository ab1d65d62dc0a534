import JSONPatch

/// What a JSON value or patch will take as compact JSON text, counted without encoding it: for bounds on
/// what a session keeps (its pages' patch histories here, the server's event log), where encoding each
/// patch only to count it would cost more than keeping it.
///
/// Strings are taken unescaped and every number as 8 bytes; the walk costs what the value's size is.
public enum EstimatedJSONSize {
    /// A value's estimated compact text length.
    /// - Parameter value: the value.
    /// - Returns: its size in bytes, estimated.
    public static func of(_ value: JSONValue) -> Int {
        switch value {
        case .null: return 4
        case .bool: return 5
        case .int, .double: return 8
        case .string(let text): return text.utf8.count + 2
        case .array(let items): return items.reduce(2) { $0 + of($1) + 1 }
        case .object(let object):
            var total = 2
            for (key, item) in object { total += key.utf8.count + 4 + of(item) }
            return total
        }
    }

    /// A patch's estimated compact text length: its operations' names, paths and values.
    /// - Parameter patch: the patch.
    /// - Returns: its size in bytes, estimated.
    public static func of(_ patch: JSONPatch) -> Int {
        var total = 2
        for operation in patch.operations {
            total += 24 + pointer(operation.path)
            switch operation {
            case .add(_, let value), .replace(_, let value), .test(_, let value): total += of(value)
            case .move(let from, _), .copy(let from, _): total += pointer(from)
            case .remove: break
            }
        }
        return total
    }

    private static func pointer(_ pointer: JSONPointer) -> Int {
        pointer.tokens.reduce(0) { $0 + $1.utf8.count + 1 }
    }
}
