/// Checks credentials for the login page.
///
/// Register an implementation under the existential so tests can swap it:
/// `services.register(DemoAuthService() as any AuthService, as: (any AuthService).self)`.
public protocol AuthService: Sendable {
    /// Whether `username` may sign in with `password`.
    /// - Parameters:
    ///   - username: the name typed on the login page.
    ///   - password: the password typed on the login page.
    func signIn(username: String, password: String) async -> Bool
}

/// The demo's credentials check: accepts `david` / `blaine123` only, after a small simulated latency.
public struct DemoAuthService: AuthService {
    /// The only user name accepted.
    public static let username = "david"
    /// The only password accepted.
    public static let password = "blaine123"

    /// How long each check takes, to show that the check is an async Model call.
    public let latency: Duration

    /// A checker that answers after `latency`.
    /// - Parameter latency: the simulated latency; zero answers at once.
    public init(latency: Duration = .milliseconds(100)) {
        self.latency = latency
    }

    /// Accepts `david` / `blaine123`; refuses everything else.
    /// - Parameters:
    ///   - username: the name typed on the login page.
    ///   - password: the password typed on the login page.
    public func signIn(username: String, password: String) async -> Bool {
        if latency > .zero { try? await Task.sleep(for: latency) }
        return username == Self.username && password == Self.password
    }
}
