extension JSONValue {
    /// The value at `pointer`, or `nil` if no such location exists.
    ///
    /// Array tokens must be valid RFC 6901 indices in bounds; `-` never resolves.
    ///
    /// - Parameter pointer: The location.
    public subscript(pointer: JSONPointer) -> JSONValue? {
        var current = self
        for token in pointer.tokens {
            switch current {
            case .object(let object):
                guard let next = object[token] else { return nil }
                current = next
            case .array(let array):
                guard let index = JSONPointer.arrayIndex(token), index < array.count else { return nil }
                current = array[index]
            default:
                return nil
            }
        }
        return current
    }
}
