import JSONPatch

/// One change of one page: the patch that takes its view from `rev − 1` to `rev`.
public struct PagePatch: Sendable, Hashable {
    /// The unit's name.
    public let unit: String
    /// The revision the patch leads to.
    public let rev: Int
    /// The RFC 6902 operations.
    public let patch: JSONPatch

    /// A page patch.
    /// - Parameters:
    ///   - unit: the unit's name.
    ///   - rev: the revision the patch leads to.
    ///   - patch: the operations.
    public init(unit: String, rev: Int, patch: JSONPatch) {
        self.unit = unit
        self.rev = rev
        self.patch = patch
    }
}
