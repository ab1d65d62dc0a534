/// The navigation stack of a session, as data.
public struct NavigationState: Sendable, Hashable {
    /// Unit names, bottom first; the last is the page on top.
    public let stack: [String]
    /// The top unit's name when it was presented, otherwise nil.
    public let presented: String?

    /// A navigation state.
    /// - Parameters:
    ///   - stack: unit names, bottom first.
    ///   - presented: the top unit when it was presented.
    public init(stack: [String], presented: String?) {
        self.stack = stack
        self.presented = presented
    }
}
