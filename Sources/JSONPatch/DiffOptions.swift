/// Tuning for ``JSONPatch/diff(from:to:at:options:)``.
///
/// ```swift
/// var options = DiffOptions()
/// options.identityKeys[try JSONPointer("/users")] = "userID"
/// let patch = JSONPatch.diff(from: old, to: new, options: options)
/// ```
public struct DiffOptions: Sendable {
    /// The member that identifies an object inside an array (`"id"` by default).
    ///
    /// When every element of both versions of an array is an object with this member, and its
    /// values are unique within each version, the array is diffed by identity: rows are removed,
    /// added and moved as units and changed rows get inner operations.
    public var identityKey: String

    /// Per-array overrides of ``identityKey``, keyed by the array's absolute location (as it
    /// appears in the emitted operations, i.e. including the diff's base and using the new
    /// document's indices).
    public var identityKeys: [JSONPointer: String]

    /// The largest edit distance Myers' algorithm explores for one unkeyed array before giving
    /// up and diffing the changed region position by position (still correct, just larger).
    /// Bounds diff time at O((N + M) · maxSequenceCost) per array.
    public var maxSequenceCost: Int

    /// Creates diff options.
    ///
    /// - Parameters:
    ///   - identityKey: The default identity member for arrays of objects.
    ///   - identityKeys: Per-array identity members, keyed by absolute array location.
    ///   - maxSequenceCost: The edit-distance cap for sequence diffs.
    public init(identityKey: String = "id", identityKeys: [JSONPointer: String] = [:], maxSequenceCost: Int = 1024) {
        self.identityKey = identityKey
        self.identityKeys = identityKeys
        self.maxSequenceCost = maxSequenceCost
    }
}
