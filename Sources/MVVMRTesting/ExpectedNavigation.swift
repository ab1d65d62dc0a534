import MVVMR

/// A navigation a test expects a step to cause: its kind and the unit that ends up on top.
///
/// ```swift
/// tester.send("login", navigation: .root("main"))
/// ```
public struct ExpectedNavigation: Sendable, Hashable, CustomStringConvertible {
    /// How the stack changes.
    public let kind: NavigationKind
    /// The unit on top after the navigation.
    public let unit: String

    /// An expected navigation.
    /// - Parameters:
    ///   - kind: how the stack changes.
    ///   - unit: the unit on top after it.
    public init(_ kind: NavigationKind, _ unit: String) {
        self.kind = kind
        self.unit = unit
    }

    /// A push of `unit`.
    public static func push(_ unit: String) -> ExpectedNavigation { ExpectedNavigation(.push, unit) }
    /// A present of `unit`.
    public static func present(_ unit: String) -> ExpectedNavigation { ExpectedNavigation(.present, unit) }
    /// A root navigation to `unit`.
    public static func root(_ unit: String) -> ExpectedNavigation { ExpectedNavigation(.root, unit) }
    /// A back navigation that leaves `unit` on top.
    public static func back(_ unit: String) -> ExpectedNavigation { ExpectedNavigation(.back, unit) }

    /// `kind unit`.
    public var description: String { "\(kind.rawValue) \(unit)" }
}
