/// A page read together with where the session stands: what `GET /api/pages/{unit}` answers.
public struct PageRead: Sendable, Hashable {
    /// The page.
    public let snapshot: PageSnapshot
    /// The session's latest event number when the page was read: the page reflects every event up to it.
    public let sequence: Int
    /// The session's navigation stack at that moment.
    public let navigation: NavigationState
    /// The compact JSON text of `snapshot.view`.
    public let encodedView: [UInt8]
    /// The number of the session's latest input record, whose effects the read shows (0 before any).
    public var inputNumber: Int? = nil

    /// A page read.
    /// - Parameters:
    ///   - snapshot: the page.
    ///   - sequence: the session's latest event number.
    ///   - navigation: the navigation stack.
    ///   - encodedView: the view's JSON text when already known; encoded from the view when nil.
    public init(snapshot: PageSnapshot, sequence: Int, navigation: NavigationState, encodedView: [UInt8]? = nil) {
        self.snapshot = snapshot
        self.sequence = sequence
        self.navigation = navigation
        self.encodedView = encodedView ?? snapshot.view.jsonBytes
    }
}
