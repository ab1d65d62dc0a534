/// What a session's pages are made from and how much of their history they keep: the same for every session of a
/// server, which shares one instance (each session holds a reference instead of five fields of its own).
///
/// ```swift
/// let settings = PageSessionSettings(registry: registry, services: services, historyByteLimit: 65_536)
/// let first = PageSession(settings: settings), second = PageSession(settings: settings)
/// ```
public final class PageSessionSettings: Sendable {
    /// The app's units and root.
    public let registry: UnitRegistry
    /// The Model layer handed to ViewModels.
    public let services: Services
    /// How many patches each page keeps for catching up clients that are behind.
    public let historyLimit: Int
    /// How many bytes of patches (``EstimatedJSONSize``) each page keeps at most.
    public let historyByteLimit: Int
    /// How many pages popped by `back` the forward list keeps bound for `forward`.
    public let forwardLimit: Int

    /// Settings for sessions of `registry`'s units.
    /// - Parameters:
    ///   - registry: the app's units and root.
    ///   - services: the Model layer handed to ViewModels.
    ///   - historyLimit: how many patches each page keeps for catching up clients that are behind.
    ///   - historyByteLimit: how many bytes of patches each page keeps at most; unlimited by default (then only
    ///     `historyLimit` bounds them).
    ///   - forwardLimit: how many pages popped by `back` the forward list keeps bound (8 by default); beyond it the
    ///     oldest is released.
    public init(
        registry: UnitRegistry, services: Services = Services(), historyLimit: Int = 64, historyByteLimit: Int = .max,
        forwardLimit: Int = PageSession.defaultForwardLimit
    ) {
        self.registry = registry
        self.services = services
        self.historyLimit = historyLimit
        self.historyByteLimit = historyByteLimit
        self.forwardLimit = max(0, forwardLimit)
    }
}
