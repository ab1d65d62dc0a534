/// A JSON value that keeps object key order and tells integers from floating point.
///
/// Integers that fit in `Int` are stored as ``int(_:)`` and survive a parse/encode round trip
/// exactly; other numbers are ``double(_:)``.
///
/// Equality follows JSON semantics rather than storage: numbers compare by numeric value
/// (`.int(1) == .double(1.0)`), and objects compare as sets of members regardless of key
/// order (see ``JSONObject``). This is what RFC 6902's `test` operation requires.
///
/// ```swift
/// let value: JSONValue = ["id": 7, "tags": ["a", "b"], "score": 1.5, "note": nil]
/// value.jsonString  // {"id":7,"tags":["a","b"],"score":1.5,"note":null}
/// ```
public enum JSONValue: Sendable {
    /// The JSON literal `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int`.
    case int(Int)
    /// Any other number. Non-finite values encode as `null`.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object whose members keep their insertion order.
    case object(JSONObject)
}

extension JSONValue: Hashable {
    /// Compares two values by JSON meaning: numbers numerically, objects regardless of key order.
    ///
    /// - Parameters:
    ///   - lhs: A value.
    ///   - rhs: Another value.
    /// - Returns: Whether both denote the same JSON value.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        isEqual(lhs, rhs, depth: 0)
    }

    /// Nesting levels compared by plain recursion before switching to an explicit work list,
    /// so comparing values at the parser's depth limit needs only a few frames of stack.
    @usableFromInline static let recursiveComparisonDepth = 48

    @usableFromInline
    static func isEqual(_ lhs: JSONValue, _ rhs: JSONValue, depth: Int) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null):
            return true
        case let (.bool(left), .bool(right)):
            return left == right
        case let (.int(left), .int(right)):
            return left == right
        case let (.double(left), .double(right)):
            return left == right
        case let (.int(integer), .double(floating)), let (.double(floating), .int(integer)):
            // Exact comparison: converting the Int to Double could round and make distinct numbers equal.
            guard let exact = JSONValue.exactInteger(floating) else { return false }
            return exact == integer
        case let (.string(left), .string(right)):
            return left == right
        case let (.array(left), .array(right)):
            guard left.count == right.count else { return false }
            if sharesStorage(left, right) { return true }
            if depth >= recursiveComparisonDepth { return isEqualIteratively(lhs, rhs) }
            for index in left.indices where !isEqual(left[index], right[index], depth: depth + 1) {
                return false
            }
            return true
        case let (.object(left), .object(right)):
            guard left.count == right.count else { return false }
            if depth >= recursiveComparisonDepth { return isEqualIteratively(lhs, rhs) }
            return left.isEqual(to: right, depth: depth + 1)
        default:
            return false
        }
    }

    /// Compares with an explicit work list instead of recursion.
    private static func isEqualIteratively(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
        var pending: [(JSONValue, JSONValue)] = [(lhs, rhs)]
        while let (left, right) = pending.popLast() {
            switch (left, right) {
            case let (.array(leftArray), .array(rightArray)):
                guard leftArray.count == rightArray.count else { return false }
                if sharesStorage(leftArray, rightArray) { continue }
                for index in leftArray.indices {
                    pending.append((leftArray[index], rightArray[index]))
                }
            case let (.object(leftObject), .object(rightObject)):
                guard leftObject.count == rightObject.count else { return false }
                for (key, value) in leftObject {
                    guard let other = rightObject[key] else { return false }
                    pending.append((value, other))
                }
            default:
                // Scalars and mismatched kinds never recurse.
                guard isEqual(left, right, depth: 0) else { return false }
            }
        }
        return true
    }

    /// Whether two arrays are the same copy-on-write buffer (then they are trivially equal).
    @inline(__always)
    private static func sharesStorage(_ left: [JSONValue], _ right: [JSONValue]) -> Bool {
        left.withUnsafeBufferPointer { leftBuffer in
            right.withUnsafeBufferPointer { rightBuffer in
                leftBuffer.baseAddress != nil && leftBuffer.baseAddress == rightBuffer.baseAddress
            }
        }
    }

    /// Hashes the value consistently with ``==(_:_:)``: integral doubles hash like the equal `Int`.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .bool(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .int(let value):
            hasher.combine(2 as UInt8)
            hasher.combine(value)
        case .double(let value):
            if let exact = JSONValue.exactInteger(value) {
                hasher.combine(2 as UInt8)
                hasher.combine(exact)
            } else {
                hasher.combine(3 as UInt8)
                hasher.combine(value)
            }
        case .string(let value):
            hasher.combine(4 as UInt8)
            hasher.combine(value)
        case .array(let value):
            hasher.combine(5 as UInt8)
            hasher.combine(value)
        case .object(let value):
            hasher.combine(6 as UInt8)
            hasher.combine(value)
        }
    }
}

extension JSONValue {
    /// The `Int` equal to `value`, or `nil` if it is not integral or out of range.
    ///
    /// Written with a truncating conversion instead of `Int(exactly:)`, whose rounding calls
    /// would make this dependency-free module need libm at link time.
    @inlinable
    static func exactInteger(_ value: Double) -> Int? {
        // -2^63 is representable; 2^63 is the first double above Int.max.
        guard value >= -9_223_372_036_854_775_808.0 && value < 9_223_372_036_854_775_808.0 else { return nil }
        let truncated = Int(value)
        return Double(truncated) == value ? truncated : nil
    }
}
