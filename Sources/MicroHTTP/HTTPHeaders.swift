/// One HTTP header field: a name and its value, as sent or received.
public struct HTTPHeader: Sendable, Hashable {
    /// The field name, as written (lookups ignore case).
    public var name: String
    /// The field value.
    public var value: String

    /// Creates a header field.
    /// - Parameters:
    ///   - name: the field name, e.g. `Content-Type`.
    ///   - value: the field value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// ```swift
/// var headers: HTTPHeaders = ["Content-Type": "application/json"]
/// headers.add(name: "Set-Cookie", value: "a=1")
/// headers["content-type"]  // "application/json"
/// ```
///
/// A request's headers stay in the bytes the server read them into until a field is looked up or
/// changed, so a handler pays only for the fields it reads.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    private enum Storage: Sendable {
        case fields([HTTPHeader])
        /// A request's values as read from the library: its entries of kind header are the fields.
        case packed(PackedValues)
    }

    private var storage: Storage

    /// The fields in the order they were added.
    public var fields: [HTTPHeader] {
        switch storage {
        case .fields(let fields):
            return fields
        case .packed(let packed):
            var fields: [HTTPHeader] = []
            packed.forEachHeader { entry in
                fields.append(HTTPHeader(name: packed.string(entry.key), value: entry.value.map(packed.string) ?? ""))
                return true
            }
            return fields
        }
    }

    /// Creates an empty header list.
    public init() { storage = .fields([]) }

    /// Creates a header list from name/value pairs, keeping their order.
    /// - Parameter elements: the fields.
    public init(dictionaryLiteral elements: (String, String)...) {
        storage = .fields(elements.map { HTTPHeader(name: $0.0, value: $0.1) })
    }

    /// Creates a header list from fields, keeping their order.
    /// - Parameter fields: the fields.
    public init(_ fields: [HTTPHeader]) { storage = .fields(fields) }

    init(packed: PackedValues) { storage = .packed(packed) }

    /// The fields' array when they are a list (not a request's packed bytes): an answer's constant fields are one
    /// shared array, which an engine can recognise by its storage.
    var fieldList: [HTTPHeader]? {
        if case .fields(let fields) = storage { return fields }
        return nil
    }

    /// The value of the first field with this name (ignoring case), or `nil`.
    /// Setting replaces every field of that name; setting `nil` removes them.
    public subscript(name: String) -> String? {
        get {
            switch storage {
            case .fields(let fields):
                return fields.first { Self.equalIgnoringASCIICase($0.name, name) }?.value
            case .packed(let packed):
                var name = name
                return name.withUTF8 { nameBytes -> String? in
                    var found: String?
                    packed.forEachHeader { entry in
                        guard packed.key(entry.key, equalsIgnoringCase: nameBytes) else { return true }
                        found = entry.value.map(packed.string) ?? ""
                        return false
                    }
                    return found
                }
            }
        }
        set {
            editFields { fields in
                fields.removeAll { Self.equalIgnoringASCIICase($0.name, name) }
                if let newValue { fields.append(HTTPHeader(name: name, value: newValue)) }
            }
        }
    }

    /// Every value of fields with this name (ignoring case), in order.
    /// - Parameter name: the field name.
    /// - Returns: the values, possibly empty.
    public func values(for name: String) -> [String] {
        fields.filter { Self.equalIgnoringASCIICase($0.name, name) }.map(\.value)
    }

    /// Appends a field, keeping any others of the same name (for `Set-Cookie`).
    /// - Parameters:
    ///   - name: the field name.
    ///   - value: the field value.
    public mutating func add(name: String, value: String) {
        editFields { $0.append(HTTPHeader(name: name, value: value)) }
    }

    /// Changes the fields as ordinary fields (a request's packed ones are turned into them first).
    private mutating func editFields(_ edit: (inout [HTTPHeader]) -> Void) {
        var fields = self.fields
        storage = .fields([])  // the array is uniquely referenced again, so the edit does not copy it
        edit(&fields)
        storage = .fields(fields)
    }

    /// The number of fields.
    public var count: Int {
        switch storage {
        case .fields(let fields):
            return fields.count
        case .packed(let packed):
            var count = 0
            packed.forEachHeader { _ in
                count += 1
                return true
            }
            return count
        }
    }

    /// Iterates over the fields in order.
    public func makeIterator() -> IndexingIterator<[HTTPHeader]> { fields.makeIterator() }

    /// Whether two lists have the same fields in the same order (names compared as written).
    /// - Parameters:
    ///   - left: one list.
    ///   - right: the other.
    /// - Returns: `true` when they are equal.
    public static func == (left: HTTPHeaders, right: HTTPHeaders) -> Bool { left.fields == right.fields }

    /// Hashes the fields in order.
    /// - Parameter hasher: the hasher.
    public func hash(into hasher: inout Hasher) { hasher.combine(fields) }

    static func equalIgnoringASCIICase(_ left: String, _ right: String) -> Bool {
        let leftBytes = left.utf8
        let rightBytes = right.utf8
        guard leftBytes.count == rightBytes.count else { return false }
        // Header names are native strings with contiguous UTF-8: compare the bytes directly (a zip of the
        // two views costs several times more, and every header lookup pays it for each field).
        let compared = leftBytes.withContiguousStorageIfAvailable { leftBuffer in
            rightBytes.withContiguousStorageIfAvailable { rightBuffer in
                Self.bytesEqualIgnoringASCIICase(leftBuffer, rightBuffer)
            }
        }
        if let compared, let result = compared { return result }
        return Self.bytesEqualIgnoringASCIICase(Array(leftBytes), Array(rightBytes))
    }

    static func bytesEqualIgnoringASCIICase<Bytes: RandomAccessCollection<UInt8>>(
        _ left: Bytes, _ right: Bytes
    ) -> Bool where Bytes.Index == Int {
        guard left.count == right.count else { return false }
        var leftIndex = left.startIndex
        var rightIndex = right.startIndex
        while leftIndex < left.endIndex {
            let a = left[leftIndex]
            let b = right[rightIndex]
            if a != b {
                let lowerA = (a >= 65 && a <= 90) ? a &+ 32 : a
                let lowerB = (b >= 65 && b <= 90) ? b &+ 32 : b
                if lowerA != lowerB { return false }
            }
            leftIndex += 1
            rightIndex += 1
        }
        return true
    }
}
