/// What an action did, as the server answered it (the client has already applied it).
public struct ActionReceipt: Sendable, Hashable {
    /// The unit the action went to.
    public var unit: String
    /// The page's revision after the action (unchanged when the action changed nothing).
    public var rev: Int
    /// The session's latest event id when the answer was built.
    public var seq: Int
    /// Whether the server replayed the first answer to the same `Idempotency-Key` (the action was not
    /// delivered again).
    public var replayed: Bool
    /// The navigation the action caused, if any.
    public var navigation: PageNavigationChange?
    /// The error code of a navigation the ViewModel asked for and the server refused, if any.
    public var navigationErrorCode: String?

    /// Creates a receipt.
    /// - Parameters:
    ///   - unit: the unit acted on.
    ///   - rev: the revision after the action.
    ///   - seq: the session's latest event id.
    ///   - replayed: whether the answer was replayed.
    ///   - navigation: the navigation caused, if any.
    ///   - navigationErrorCode: a refused navigation's error code.
    public init(
        unit: String, rev: Int, seq: Int, replayed: Bool = false, navigation: PageNavigationChange? = nil,
        navigationErrorCode: String? = nil
    ) {
        self.unit = unit
        self.rev = rev
        self.seq = seq
        self.replayed = replayed
        self.navigation = navigation
        self.navigationErrorCode = navigationErrorCode
    }
}
