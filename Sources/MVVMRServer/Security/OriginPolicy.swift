/// Decides whether a state-changing request may come from the origin it names.
///
/// Requests without an `Origin` header (curl, native clients) are allowed: the header is what browsers
/// send, and it is browsers whose cookies could be ridden. With the header, the origin must be the
/// server's own or one of `ALLOWED_ORIGINS`. The server's own origin is its `PUBLIC_ORIGIN` when one is
/// configured, and only then: the request's `Host` is chosen by whoever sent it, so a page served from a
/// name the attacker rebinds to the server's address (DNS rebinding) would otherwise pass as same-origin.
/// Without `PUBLIC_ORIGIN`, the scheme and `Host` the request reached the server by stand for it.
public struct OriginPolicy: Sendable {
    /// The configured public origin, normalised, or `nil`.
    public let publicOrigin: String?
    /// Other allowed origins, normalised.
    public let allowedOrigins: Set<String>

    /// Creates a policy.
    /// - Parameters:
    ///   - publicOrigin: the server's public origin, or `nil`/empty.
    ///   - allowedOrigins: other allowed origins.
    public init(publicOrigin: String?, allowedOrigins: [String]) {
        self.publicOrigin = publicOrigin.flatMap { Self.normalizedOrigin($0) }
        self.allowedOrigins = Set(allowedOrigins.compactMap { Self.normalizedOrigin($0) })
    }

    /// Whether a request with this `Origin` header may change state.
    /// - Parameters:
    ///   - origin: the `Origin` header, or `nil` when absent.
    ///   - requestScheme: `http` or `https`, as the request reached the server (or the proxy); read only when the
    ///     request has an `Origin` that is neither the public nor an allowed one.
    ///   - requestHost: the request's `Host` (or trusted `X-Forwarded-Host`); read only then too, so that most
    ///     requests (a program's, without `Origin`) never look their headers up.
    /// - Returns: `true` when allowed.
    public func allows(
        origin: String?, requestScheme: @autoclosure () -> String, requestHost: @autoclosure () -> String?
    ) -> Bool {
        guard let origin else { return true }
        guard let normalized = Self.normalizedOrigin(origin) else { return false }
        if let publicOrigin, normalized == publicOrigin { return true }
        if allowedOrigins.contains(normalized) { return true }
        // A configured public origin is the only "own" origin: the Host header proves nothing then.
        guard publicOrigin == nil else { return false }
        if let requestHost = requestHost(), let own = Self.normalizedOrigin("\(requestScheme())://\(requestHost)") {
            return normalized == own
        }
        return false
    }

    /// Lower-cases an origin (`scheme://host[:port]`) and drops a default port; `nil` if it is not one
    /// (`null`, a path, a missing host).
    /// - Parameter text: the origin text.
    /// - Returns: the normalised origin, or `nil`.
    public static func normalizedOrigin(_ text: String) -> String? {
        let lowered = text.lowercased()
        let scheme: String
        let rest: Substring
        if lowered.hasPrefix("https://") {
            scheme = "https"
            rest = lowered.dropFirst(8)
        } else if lowered.hasPrefix("http://") {
            scheme = "http"
            rest = lowered.dropFirst(7)
        } else {
            return nil
        }
        var authority = rest
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@"), !authority.contains(" ") else { return nil }
        let defaultPort = scheme == "https" ? ":443" : ":80"
        if authority.hasSuffix(defaultPort) { authority = authority.dropLast(defaultPort.count) }
        return "\(scheme)://\(authority)"
    }
}
