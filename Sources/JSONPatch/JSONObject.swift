/// A JSON object: string keys mapped to ``JSONValue``s, keeping the order in which keys were inserted.
///
/// Key order is preserved for encoding (so output is stable and readable), but it is *not* part
/// of equality: two objects are equal when they have the same keys mapped to equal values, in any
/// order. RFC 6902's `test` operation and the diff's correctness check both need that meaning, and
/// it matches how JSON objects are defined (RFC 8259 §4: an unordered collection).
///
/// Assigning a new key appends it; assigning an existing key replaces its value in place;
/// assigning `nil` removes the key.
///
/// ```swift
/// var object: JSONObject = ["b": 1, "a": 2]
/// object["c"] = true       // appended: b, a, c
/// object["b"] = nil        // removed:  a, c
/// ```
public struct JSONObject: Sendable {
    /// One member. Keys and values live together in a single array so that an object costs one
    /// allocation and copying it one retain (objects are copied on every enum pattern match).
    @usableFromInline
    struct Member: Sendable {
        @usableFromInline var key: String
        @usableFromInline var value: JSONValue

        @usableFromInline
        init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// Objects up to this size are searched linearly; larger ones keep a hash index.
    /// Most view-model objects are small, and a linear scan over a few keys beats hashing.
    @usableFromInline static let indexThreshold = 8

    @usableFromInline var members: [Member]
    /// Key to position, present only when `count > indexThreshold`.
    @usableFromInline var positions: [String: Int]?

    /// Creates an empty object.
    public init() {
        members = []
        positions = nil
    }

    /// Creates an empty object with room for `minimumCapacity` members before it grows.
    /// - Parameter minimumCapacity: how many members it takes without allocating again.
    public init(minimumCapacity: Int) {
        members = []
        members.reserveCapacity(minimumCapacity)
        positions = nil
    }

    /// Creates an object from key/value pairs in order.
    ///
    /// A key that occurs twice keeps its first position and its last value.
    ///
    /// - Parameter pairs: The members, in order.
    @inlinable
    public init(_ pairs: [(String, JSONValue)]) {
        guard pairs.count <= Self.indexThreshold else {
            self.init(indexing: pairs)
            return
        }
        // A literal's few members (a row's `jsonValue`): appended in place, each key looked for among the earlier
        // ones, with no index to keep. Inlined where the literal is written, so the pairs' array can go.
        var members: [Member] = []
        members.reserveCapacity(pairs.count)
        for (key, value) in pairs {
            if let position = members.firstIndex(where: { $0.key == key }) {
                members[position].value = value
            } else {
                members.append(Member(key: key, value: value))
            }
        }
        self.init(smallMembers: members)
    }

    /// An object of at most `indexThreshold` members with distinct keys, which needs no index.
    @usableFromInline
    init(smallMembers: [Member]) {
        members = smallMembers
        positions = nil
    }

    /// An object of more than `indexThreshold` pairs, which keeps an index of its keys.
    @usableFromInline
    init(indexing pairs: [(String, JSONValue)]) {
        self.init()
        members.reserveCapacity(pairs.count)
        for (key, value) in pairs {
            self[key] = value
        }
    }

    /// The number of members.
    public var count: Int { members.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    /// The keys, in insertion order.
    public var keys: [String] { members.map(\.key) }

    /// The values, in key insertion order.
    public var values: [JSONValue] { members.map(\.value) }

    /// The position of `key` in insertion order, or `nil` if absent.
    ///
    /// - Parameter key: The member name.
    /// - Returns: The zero-based position.
    @inlinable
    public func position(ofKey key: String) -> Int? {
        if let positions { return positions[key] }
        return members.firstIndex { $0.key == key }
    }

    /// The value for `key`; setting `nil` removes the key, setting a new key appends it.
    ///
    /// - Parameter key: The member name.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let position = position(ofKey: key) else { return nil }
            return members[position].value
        }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Changes the value of `key` where it is, when the object has that key: `body` gets the value itself, not a copy,
    /// so a container inside it is changed without copy-on-write copying it (the object itself must be held by one
    /// owner, as ``JSONValue/takeObject()`` leaves it).
    ///
    /// - Parameters:
    ///   - key: The member name.
    ///   - body: Changes the value.
    /// - Returns: What `body` returned, or `nil` (and `body` not called) when the key is absent.
    @inlinable
    public mutating func modifyValue<Result>(forKey key: String, _ body: (inout JSONValue) throws -> Result) rethrows
        -> Result?
    {
        guard let position = position(ofKey: key) else { return nil }
        return try body(&members[position].value)
    }

    /// Sets the value for `key`, appending the key if it is new.
    ///
    /// - Parameters:
    ///   - value: The new value.
    ///   - key: The member name.
    /// - Returns: The previous value, or `nil` if the key was new.
    @discardableResult
    public mutating func updateValue(_ value: JSONValue, forKey key: String) -> JSONValue? {
        if let position = position(ofKey: key) {
            let previous = members[position].value
            members[position].value = value
            return previous
        }
        members.append(Member(key: key, value: value))
        if positions != nil {
            positions?[key] = members.count - 1
        } else if members.count > Self.indexThreshold {
            rebuildPositions()
        }
        return nil
    }

    /// Removes `key` and its value, keeping the order of the remaining keys.
    ///
    /// - Parameter key: The member name.
    /// - Returns: The removed value, or `nil` if the key was absent.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let position = position(ofKey: key) else { return nil }
        let removed = members.remove(at: position).value
        if members.count > Self.indexThreshold {
            rebuildPositions()
        } else {
            positions = nil
        }
        return removed
    }

    /// Inserts a key that is absent at `position` in insertion order (clamped to the end): how an
    /// in-place patch puts back a member it removed, where it was.
    mutating func insertValue(_ value: JSONValue, forKey key: String, at position: Int) {
        members.insert(Member(key: key, value: value), at: Swift.min(Swift.max(position, 0), members.count))
        if members.count > Self.indexThreshold {
            rebuildPositions()
        } else {
            positions = nil
        }
    }

    private mutating func rebuildPositions() {
        var index: [String: Int] = [:]
        index.reserveCapacity(members.count)
        for (position, member) in members.enumerated() {
            index[member.key] = position
        }
        positions = index
    }
}

extension JSONObject: Hashable {
    /// Compares members regardless of key order.
    ///
    /// - Parameters:
    ///   - lhs: An object.
    ///   - rhs: Another object.
    /// - Returns: Whether both have the same keys mapped to equal values.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.isEqual(to: rhs, depth: 0)
    }

    /// Member-wise comparison; `depth` is the nesting level, passed on so that
    /// ``JSONValue`` can bound its recursion.
    @usableFromInline
    func isEqual(to other: JSONObject, depth: Int) -> Bool {
        guard members.count == other.members.count else { return false }
        // Copies of one object (e.g. unchanged rows of a view-model derived from the previous
        // one by mutation) share their member buffer: equal without looking inside.
        let sameBuffer = members.withUnsafeBufferPointer { mine in
            other.members.withUnsafeBufferPointer { theirs in
                mine.baseAddress != nil && mine.baseAddress == theirs.baseAddress
            }
        }
        if sameBuffer { return true }
        // Usually both have the same keys in the same order: compare position by position,
        // and fall back to lookups from the first position where the keys differ. Keys are
        // unique and the counts equal, so matching every key of `self` proves a bijection.
        for position in members.indices {
            let member = members[position]
            if member.key == other.members[position].key {
                guard JSONValue.isEqual(member.value, other.members[position].value, depth: depth) else { return false }
                continue
            }
            for remaining in members[position...] {
                guard let otherValue = other[remaining.key],
                      JSONValue.isEqual(remaining.value, otherValue, depth: depth)
                else { return false }
            }
            return true
        }
        return true
    }

    /// Hashes the members order-independently, consistent with ``==(_:_:)``.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for member in members {
            var memberHasher = Hasher()
            memberHasher.combine(member.key)
            memberHasher.combine(member.value)
            // Addition commutes, so the key order does not affect the result.
            combined &+= memberHasher.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(combined)
    }
}

extension JSONObject: Sequence {
    /// A member: its key and value.
    public typealias Element = (key: String, value: JSONValue)

    /// Iterates the members in insertion order.
    public struct Iterator: IteratorProtocol {
        @usableFromInline let object: JSONObject
        @usableFromInline var position = 0

        @usableFromInline init(object: JSONObject) {
            self.object = object
        }

        /// The next member, or `nil` when all have been produced.
        ///
        /// - Returns: The next key/value pair.
        @inlinable
        public mutating func next() -> Element? {
            guard position < object.members.count else { return nil }
            defer { position += 1 }
            let member = object.members[position]
            return (member.key, member.value)
        }
    }

    /// An iterator over the members in insertion order.
    ///
    /// - Returns: The iterator.
    @inlinable
    public func makeIterator() -> Iterator {
        Iterator(object: self)
    }

    /// The number of members, so `Array(object)` allocates once.
    public var underestimatedCount: Int { members.count }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// Creates an object from a dictionary literal, keeping the written key order.
    ///
    /// - Parameter elements: The members, in order.
    @inlinable
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }
}

extension JSONObject: CustomStringConvertible {
    /// The compact JSON text of the object.
    public var description: String {
        JSONValue.object(self).jsonString
    }
}
