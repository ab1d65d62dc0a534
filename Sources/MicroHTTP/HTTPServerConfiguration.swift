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
    /// The largest header section (request line included) a request may have; a larger one is answered
    /// 431 `header_fields_too_large` (414 `uri_too_long` when the target alone is larger). libmicrohttpd's
    /// per-connection pool is sized at this plus 4 KiB so that heads a little over it are measured and answered by
    /// MicroHTTP; only heads beyond the pool are answered by the library itself (see docs/HTTP.md).
    ///
    /// Every connection the library holds pays for its pool for as long as it is open: libmicrohttpd 0.9.75 gives
    /// a new request part of the pool to read into and zeroes what the request did not use, so an idle connection
    /// keeps about the whole pool resident. Event streams do not: MicroHTTP serves them itself, and the library
    /// frees their connections (docs/HTTP.md, "Memory per connection").
    public var maxHeaderBytes: Int = 8 * 1024
    /// Seconds a connection may stay silent before it is closed (inactivity, not total time); also how long an
    /// event stream may have bytes pending without its client taking any before it ends.
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
    /// Event streams, which MicroHTTP serves itself once the library has let go of their connections, are held to
    /// it on their own: at most this many streams, beyond them 503 `stream_capacity_reached`.
    public var maxConnections: Int = 10_000
    /// The most connections open at once from one IP address; 0 means no per-address limit. On by default,
    /// so that one address cannot take every connection the server has. Event streams are held to it on their own
    /// (the library no longer counts theirs): at most this many from one address, beyond them 429
    /// `too_many_streams_from_address`.
    public var maxConnectionsPerIP: Int = 128
    /// How often every open event stream receives a `: ping` comment.
    public var heartbeatInterval: Duration = .seconds(15)
    /// The pending-connection queue length given to `listen`.
    public var listenBacklog: Int = 1024

    /// What reads and writes HTTP: MicroHTTP's own epoll loops (the default), or libmicrohttpd.
    public enum Engine: String, Sendable {
        /// libmicrohttpd 0.9.75, through the C shim.
        case libmicrohttpd
        /// MicroHTTP's own HTTP/1.1 engine: one epoll loop per thread (docs/HTTP.md, "The epoll engine").
        case epoll
    }

    /// The engine; the environment variable `MICROHTTP_ENGINE` (`epoll` or `libmicrohttpd`), when set, overrides
    /// it for every server of the process (so that a whole test suite or benchmark can run on either).
    public var engine: Engine = .epoll

    /// The default configuration: `127.0.0.1:8080`.
    public init() {}

    /// The number of online processors, at least 1.
    public static var onlineProcessorCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
