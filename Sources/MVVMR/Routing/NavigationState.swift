/// The navigation stack of a session, as data.
public struct NavigationState: Sendable, Hashable {
    /// Unit names, bottom first; the last is the page on top.
    public let stack: [String]
    /// The top unit's name when it was presented, otherwise nil.
    public let presented: String?
    /// The pages popped by `back` (or by an `open` that popped back), kept bound with their state for a
    /// `forward` navigation: unit names, nearest first (the first is where `forward` goes).
    public let forward: [String]

    /// A navigation state.
    /// - Parameters:
    ///   - stack: unit names, bottom first.
    ///   - presented: the top unit when it was presented.
    ///   - forward: the forward list's unit names, nearest first.
    public init(stack: [String], presented: String?, forward: [String] = []) {
        self.stack = stack
        self.presented = presented
        self.forward = forward
    }
}
