#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How an ``HTTPServer`` listens and what it tolerates from clients.
public struct HTTPServerConfiguration: Sendable {
    /// The address to listen on: an IPv4 or IPv6 literal, `localhost`, or `0.0.0.0` / `::` for every interface.
    public var host: String = "127.0.0.1"
    /// The port; 0 picks any free port (read it back from ``HTTPServer/port``).
    public var port: Int = 8080
    /// Worker threads polling connections with epoll; one per core by default.
    public var threadCount: Int = HTTPServerConfiguration.onlineProcessorCount
    /// The largest request body accepted; a larger one is answered 413 without being read into memory.
    public var maxBodyBytes: Int = 1 << 20
    /// Memory for one connection's request line and headers (libmicrohttpd's per-connection pool, at least
    /// 4096). Requests whose headers do not fit are answered by the library itself (see docs/HTTP.md).
    ///
    /// Every open connection pays for all of it, for as long as it is open: libmicrohttpd 0.9.75 gives a new
    /// request half of the pool to read into and zeroes what the request did not use, and the response is
    /// written through the rest. An idle event stream therefore costs about this much plus 2 KiB; 5 KiB keeps
    /// it under 8 KiB (was 32 KiB: 30 KiB per stream). The library grows its read buffer only to about half
    /// of the pool, so that is the largest header section a request may have: about 2.3 KiB at 5 KiB (about
    /// 16 KiB at 32 KiB).
    public var maxHeaderBytes: Int = 5 * 1024
    /// Seconds a connection may stay silent before it is closed (inactivity, not total time).
    public var connectionTimeoutSeconds: Int = 30
    /// Seconds a connection has to deliver a request's whole header section, counted from the moment it is
    /// ready for one (accepted, or its previous response complete); 0: no limit. Unlike the inactivity
    /// timeout, a client trickling bytes cannot stretch it, and it also bounds how long an idle keep-alive
    /// connection waits for its next request.
    public var requestHeaderTimeoutSeconds: Int = 10
    /// Seconds a connection has to deliver a request's whole body once its headers are in; 0: no limit.
    public var requestBodyTimeoutSeconds: Int = 30
    /// The most connections open at once. At the limit the library stops accepting: further connections wait,
    /// unanswered, in the listen backlog until one closes (unlike `maxConnectionsPerIP`, which closes them at once).
    public var maxConnections: Int = 10_000
    /// The most connections open at once from one IP address; 0 means no per-address limit. On by default,
    /// so that one address cannot take every connection the server has.
    public var maxConnectionsPerIP: Int = 128
    /// How often every open event stream receives a `: ping` comment.
    public var heartbeatInterval: Duration = .seconds(15)
    /// The pending-connection queue length given to `listen`.
    public var listenBacklog: Int = 1024

    /// The default configuration: `127.0.0.1:8080`.
    public init() {}

    /// The number of online processors, at least 1.
    public static var onlineProcessorCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
