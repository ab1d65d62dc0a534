#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A listening address parsed from the configured host: IPv4, IPv6, or every interface.
struct BindAddress {
    private enum Storage {
        case any
        case ipv4(sockaddr_in)
        case ipv6(sockaddr_in6)
    }

    private let storage: Storage

    /// Whether the library must be told to use IPv6.
    var isIPv6: Bool {
        if case .ipv6 = storage { return true }
        return false
    }

    init(host: String, port: Int) throws(HTTPServerError) {
        guard (0...65535).contains(port) else {
            throw HTTPServerError(code: "invalid_port", message: "Port \(port) is not between 0 and 65535.")
        }
        let networkPort = in_port_t(UInt16(port).bigEndian)
        let literal = host == "localhost" ? "127.0.0.1" : host
        if literal.isEmpty || literal == "0.0.0.0" || literal == "*" {
            storage = .any
            return
        }
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = networkPort
            storage = .ipv4(v4)
            return
        }
        var v6 = sockaddr_in6()
        let unbracketed = literal.hasPrefix("[") && literal.hasSuffix("]") ? String(literal.dropFirst().dropLast()) : literal
        if inet_pton(AF_INET6, unbracketed, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = networkPort
            storage = .ipv6(v6)
            return
        }
        throw HTTPServerError(code: "invalid_host", message: "'\(host)' is not an IP address, 'localhost' or '0.0.0.0'.")
    }

    /// Calls `body` with a pointer to the socket address, or `nil` for every interface.
    /// Calls `body` with the address on `port` as a `sockaddr` and its length; for every interface, IPv4's
    /// any-address.
    func withBindableSocketAddress<Result>(port hostPort: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        let port = in_port_t(UInt16(clamping: hostPort).bigEndian)
        switch storage {
        case .any:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .ipv4(var address):
            address.sin_port = port
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .ipv6(var address):
            address.sin6_port = port
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
    }

    func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>?) -> Result) -> Result {
        switch storage {
        case .any:
            return body(nil)
        case .ipv4(var address):
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0) }
            }
        case .ipv6(var address):
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0) }
            }
        }
    }
}
