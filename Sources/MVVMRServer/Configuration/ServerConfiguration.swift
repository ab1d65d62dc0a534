/// Every setting of an MVVMR server. Each is a flag (`--max-sessions 1000`) and an environment variable
/// (`MAX_SESSIONS`); the flag wins. ``ServerConfiguration/helpText`` lists them with their defaults.
public struct ServerConfiguration: Sendable, Equatable {
    /// `HOST`: the address to listen on.
    public var host = "0.0.0.0"
    /// `PORT`: the port to listen on (0: any free port).
    public var port = 8080
    /// `PUBLIC_DIR`: the browser client's files.
    public var publicDirectory = "Public"
    /// `PUBLIC_ORIGIN`: the origin users reach the server at (`https://app.example.com`) when it runs
    /// behind a proxy; its scheme decides the session cookie's `Secure` flag, and it is always an allowed
    /// origin. Empty: same-origin is judged from the request's `Host`.
    public var publicOrigin = ""
    /// `ALLOWED_ORIGINS`: other origins allowed to make state-changing requests (comma-separated).
    public var allowedOrigins: [String] = []
    /// `TRUST_FORWARDED_HEADERS`: whether `X-Forwarded-For` / `X-Forwarded-Proto` / `X-Forwarded-Host`
    /// are believed (only behind a proxy that sets them).
    public var trustForwardedHeaders = false
    /// `MAX_SESSIONS`: the most live sessions; beyond it the least recently used idle ones are evicted.
    public var maxSessions = 100_000
    /// `SESSION_TTL_SECONDS`: a session with no request and no open stream for this long expires.
    public var sessionTimeToLiveSeconds = 1800
    /// `MAX_BODY_BYTES`: the largest request body.
    public var maxBodyBytes = 64 * 1024
    /// `MAX_HEADER_BYTES`: the largest header section (request line included); larger is `431`. Every open
    /// connection holds this plus 4 KiB (libmicrohttpd's per-connection pool) while it is open.
    public var maxHeaderBytes = 8 * 1024
    /// `NEW_SESSIONS_PER_IP_PER_MINUTE`: new sessions one address may open per minute (0: unlimited).
    public var newSessionsPerIPPerMinute = 0
    /// `MAX_CONNECTIONS`: the most open connections.
    public var maxConnections = 10_000
    /// `MAX_CONNECTIONS_PER_IP`: the most open connections from one address (0: unlimited). On by default so
    /// that one address cannot hold every connection the server has.
    ///
    /// Off (0) by default when `TRUST_FORWARDED_HEADERS` is true, since every connection then comes from the proxy.
    public var maxConnectionsPerIP = 128
    /// `SHUTDOWN_GRACE_SECONDS`: how long requests in flight may take to finish on SIGTERM.
    public var shutdownGraceSeconds = 10
    /// `LOG_LEVEL`: `debug`, `info`, `warning`, `error` or `off`.
    public var logLevel = LogLevel.info
    /// `HEARTBEAT_SECONDS`: how often event streams get a `: ping` comment.
    public var heartbeatSeconds = 15
    /// `EVENT_LOG_SIZE`: events kept per session for `Last-Event-ID` replay (at least 256).
    public var eventLogSize = 256
    /// `THREADS`: HTTP worker threads (0: one per core).
    public var threads = 0
    /// `CONNECTION_TIMEOUT_SECONDS`: idle connections are closed after this long.
    public var connectionTimeoutSeconds = 30

    // Request deadlines (issue 11): unlike the idle timeout, a client trickling bytes cannot stretch these.
    /// `REQUEST_HEADER_TIMEOUT_SECONDS`: a request's whole header section must arrive within this, counted from
    /// the moment the connection is ready for it (accepted, or its previous response complete); so an idle
    /// keep-alive connection is closed after this too (0: no deadline).
    public var requestHeaderTimeoutSeconds = 10
    /// `REQUEST_BODY_TIMEOUT_SECONDS`: a request's whole body must arrive within this after its headers
    /// (0: no deadline).
    public var requestBodyTimeoutSeconds = 30
    // Per-session and per-client bounds (issue 11): what one client may make the server hold.

    /// `MAX_IDEMPOTENCY_KEY_BYTES`: the longest `Idempotency-Key` (UTF-8 bytes); a longer one is refused.
    public var maxIdempotencyKeyBytes = 255
    /// `MAX_IDEMPOTENCY_BYTES_PER_SESSION`: the bytes one session's idempotency cache may hold (each
    /// entry's key, request body and response body); when full, a new keyed action is refused.
    public var maxIdempotencyBytesPerSession = 262_144
    /// `MAX_EVENT_LOG_BYTES`: the bytes one session's event log may hold for replay (besides
    /// `EVENT_LOG_SIZE`, its count); the oldest events go first.
    public var maxEventLogBytes = 262_144
    /// `MAX_PAGE_HISTORY_BYTES`: the bytes of patches each page keeps (besides the last 64) for a client
    /// that sends an older `rev`; a client further behind gets a snapshot.
    public var maxPageHistoryBytes = 65_536
    /// `MAX_ACTION_VALUE_BYTES`: the largest action `value`, measured as its compact JSON text.
    public var maxActionValueBytes = 16_384
    /// `MAX_SESSION_BYTES`: the bytes one session may hold (its pages' views and patch histories, event log
    /// and idempotency cache); at or over it, actions are refused until it holds less.
    public var maxSessionBytes = 1_048_576
    /// `MAX_STREAMS_PER_SESSION`: the most open event streams of one session.
    public var maxStreamsPerSession = 8
    /// `MAX_STREAMS_PER_IP`: the most open event streams from one address.
    public var maxStreamsPerIP = 64

    // Durable sessions (issue 12): every session is a numbered log of its inputs, kept in a store.
    /// `SESSION_STORE`: where sessions' input logs are kept: `sqlite:PATH` (one SQLite file, created with its
    /// directory if missing; a relative path is under the working directory), `nats://host:port[,host:port…]`
    /// (NATS JetStream, shared by every node naming the same servers: see ``NATSSessionStore``) or `memory` (lost on
    /// restart).
    public var sessionStore = "sqlite:data/sessions.sqlite"
    /// `NATS_REPLICAS`: with `SESSION_STORE=nats://…`, how many JetStream servers keep each session's log and
    /// activity (the stream's and the bucket's replica count when this node creates them; 1, or 3 or 5 in a cluster).
    public var natsReplicas = 1
    /// `SESSION_DURABILITY`: when an input counts as stored (and so may be acknowledged): `process` (written
    /// to the operating system: survives `kill -9`) or `machine` (`fsync` at every commit: survives power loss).
    public var sessionDurability = SessionDurability.process
    /// `PASSIVATE_AFTER_SECONDS`: a session with no request and no open stream for this long leaves memory; it
    /// stays in the store and is restored (replayed) on its next request (0: never).
    public var passivateAfterSeconds = 300
    /// `HIBERNATE_AFTER_SECONDS`: a session with no request for this long lets its pages hibernate: a page that can be
    /// bound again exactly (a `RestorableViewModel` at a quiet point, or a page nothing reached since it was
    /// bound) keeps only its document, and is bound again on its next action. Its reads, streams and catch-up
    /// patches go on from the document. 0: never. (Phoenix LiveView hibernates its processes after 15 s.)
    public var hibernateAfterSeconds = 15
    /// `MAX_PAGE_RECORDS`: the most action records (and topic messages that changed it) a page's log may hold
    /// (since the page was last bound fresh)
    /// for it to be replayed on restore; a page past it is bound fresh instead (its clients get a snapshot), so
    /// that restoring a session stays quick, and its records are dropped from the store.
    public var maxPageRecords = 10_000
    /// `SNAPSHOT_AFTER_RECORDS`: once a session's store holds this many records since its last snapshot, the
    /// server takes a snapshot of the session (off the request path) and the store keeps it instead of those
    /// records (compaction), when every live page can be saved (see `RestorableViewModel`); 0: never.
    public var snapshotAfterRecords = 500
    /// `SESSION_LOG`: whether `GET /api/session/log` answers (`on`, the default) or is refused with 403
    /// `session_log_disabled` (`off`). A session's log holds everything its client sent, form fields included: a
    /// server whose users type secrets may turn it off.
    public var servesSessionLogs = true

    /// The URL a person opens to reach a server listening on `host` and `port`: `http://localhost:PORT/` when it
    /// listens on every address (`0.0.0.0`, `::` or none given), else `http://HOST:PORT/` (an IPv6 address in
    /// brackets).
    /// - Parameters:
    ///   - host: the address the server listens on.
    ///   - port: its port.
    public static func browsableURL(host: String, port: Int) -> String {
        let trimmed = host.trimmingSpaces
        if trimmed.isEmpty || trimmed == "0.0.0.0" || trimmed == "::" || trimmed == "[::]" {
            return "http://localhost:\(port)/"
        }
        let shown = trimmed.contains(":") && !trimmed.hasPrefix("[") ? "[\(trimmed)]" : trimmed
        return "http://\(shown):\(port)/"
    }

    /// The defaults.
    public init() {}

    private struct Setting: Sendable {
        let flag: String
        let environment: String
        let summary: String
        let current: @Sendable (ServerConfiguration) -> String
        let apply: @Sendable (inout ServerConfiguration, String) throws(ConfigurationError) -> Void
    }

    private static func integer(
        _ flag: String, _ environment: String, _ summary: String, range: ClosedRange<Int>,
        _ keyPath: WritableKeyPath<ServerConfiguration, Int> & Sendable
    ) -> Setting {
        Setting(
            flag: flag, environment: environment, summary: summary,
            current: { String($0[keyPath: keyPath]) },
            apply: { configuration, text throws(ConfigurationError) in
                guard let value = Int(text.trimmingSpaces), range.contains(value) else {
                    throw ConfigurationError(
                        setting: flag, message: "'\(text)' is not a whole number from \(range.lowerBound) to \(range.upperBound).")
                }
                configuration[keyPath: keyPath] = value
            })
    }

    private static func string(
        _ flag: String, _ environment: String, _ summary: String,
        _ keyPath: WritableKeyPath<ServerConfiguration, String> & Sendable
    ) -> Setting {
        Setting(
            flag: flag, environment: environment, summary: summary,
            current: { $0[keyPath: keyPath] },
            apply: { configuration, text throws(ConfigurationError) in configuration[keyPath: keyPath] = text.trimmingSpaces })
    }

    private static let settings: [Setting] = [
        string("--host", "HOST", "address to listen on", \.host),
        integer("--port", "PORT", "port to listen on (0: any free port)", range: 0...65535, \.port),
        string("--public-dir", "PUBLIC_DIR", "directory of the browser client's files", \.publicDirectory),
        Setting(
            flag: "--public-origin", environment: "PUBLIC_ORIGIN",
            summary: "origin users reach the server at, behind a proxy (its scheme sets the cookie's Secure flag)",
            current: { $0.publicOrigin },
            apply: { configuration, text throws(ConfigurationError) in
                let origin = text.trimmingSpaces
                guard origin.isEmpty || OriginPolicy.normalizedOrigin(origin) != nil else {
                    throw ConfigurationError(setting: "--public-origin", message: "'\(text)' is not an origin like https://example.com.")
                }
                configuration.publicOrigin = OriginPolicy.normalizedOrigin(origin) ?? ""
            }),
        Setting(
            flag: "--allowed-origins", environment: "ALLOWED_ORIGINS",
            summary: "other origins allowed to change state (comma-separated)",
            current: { $0.allowedOrigins.joined(separator: ",") },
            apply: { configuration, text throws(ConfigurationError) in
                var origins: [String] = []
                for part in text.split(separator: ",") {
                    let candidate = String(part).trimmingSpaces
                    guard let origin = OriginPolicy.normalizedOrigin(candidate) else {
                        throw ConfigurationError(setting: "--allowed-origins", message: "'\(candidate)' is not an origin like https://example.com.")
                    }
                    origins.append(origin)
                }
                configuration.allowedOrigins = origins
            }),
        Setting(
            flag: "--trust-forwarded-headers", environment: "TRUST_FORWARDED_HEADERS",
            summary: "believe X-Forwarded-* headers (true/false; only behind a proxy that sets them)",
            current: { String($0.trustForwardedHeaders) },
            apply: { configuration, text throws(ConfigurationError) in
                switch text.trimmingSpaces.lowercased() {
                case "true", "1", "yes", "on": configuration.trustForwardedHeaders = true
                case "false", "0", "no", "off", "": configuration.trustForwardedHeaders = false
                default: throw ConfigurationError(setting: "--trust-forwarded-headers", message: "'\(text)' is not true or false.")
                }
            }),
        integer("--max-sessions", "MAX_SESSIONS", "most live sessions (least recently used idle ones are evicted)", range: 1...100_000_000, \.maxSessions),
        integer("--session-ttl-seconds", "SESSION_TTL_SECONDS", "idle time after which a session expires", range: 1...31_536_000, \.sessionTimeToLiveSeconds),
        integer("--max-body-bytes", "MAX_BODY_BYTES", "largest request body", range: 1...(1 << 30), \.maxBodyBytes),
        integer(
            "--max-header-bytes", "MAX_HEADER_BYTES", "largest header section, request line included (each open connection holds it plus 4 KiB)",
            range: 4096...(1 << 20), \.maxHeaderBytes),
        integer("--new-sessions-per-ip-per-minute", "NEW_SESSIONS_PER_IP_PER_MINUTE", "new sessions per address per minute (0: unlimited)", range: 0...1_000_000_000, \.newSessionsPerIPPerMinute),
        integer("--max-connections", "MAX_CONNECTIONS", "most open connections", range: 1...1_000_000, \.maxConnections),
        integer("--max-connections-per-ip", "MAX_CONNECTIONS_PER_IP", "most open connections per address (0: unlimited)", range: 0...1_000_000, \.maxConnectionsPerIP),
        integer("--shutdown-grace-seconds", "SHUTDOWN_GRACE_SECONDS", "time for requests in flight to finish on SIGTERM", range: 0...3600, \.shutdownGraceSeconds),
        Setting(
            flag: "--log-level", environment: "LOG_LEVEL", summary: "debug, info, warning, error or off",
            current: { $0.logLevel.rawValue },
            apply: { configuration, text throws(ConfigurationError) in
                guard let level = LogLevel(rawValue: text.trimmingSpaces.lowercased()) else {
                    throw ConfigurationError(setting: "--log-level", message: "'\(text)' is not one of debug, info, warning, error, off.")
                }
                configuration.logLevel = level
            }),
        integer("--heartbeat-seconds", "HEARTBEAT_SECONDS", "interval of the `: ping` comment on event streams", range: 1...3600, \.heartbeatSeconds),
        integer("--event-log-size", "EVENT_LOG_SIZE", "events kept per session for Last-Event-ID replay", range: 256...1_000_000, \.eventLogSize),
        integer("--threads", "THREADS", "HTTP worker threads (0: one per core)", range: 0...1024, \.threads),
        integer("--connection-timeout-seconds", "CONNECTION_TIMEOUT_SECONDS", "idle connections are closed after this long", range: 1...86_400, \.connectionTimeoutSeconds),
        // Request deadlines (issue 11).
        integer("--request-header-timeout-seconds", "REQUEST_HEADER_TIMEOUT_SECONDS", "time for a request's whole header section, from when the connection is ready for it (0: none)", range: 0...86_400, \.requestHeaderTimeoutSeconds),
        integer("--request-body-timeout-seconds", "REQUEST_BODY_TIMEOUT_SECONDS", "time for a request's whole body after its headers (0: none)", range: 0...86_400, \.requestBodyTimeoutSeconds),
        // Per-session and per-client bounds.
        integer("--max-idempotency-key-bytes", "MAX_IDEMPOTENCY_KEY_BYTES", "longest Idempotency-Key, in bytes", range: 1...65_536, \.maxIdempotencyKeyBytes),
        integer(
            "--max-idempotency-bytes-per-session", "MAX_IDEMPOTENCY_BYTES_PER_SESSION",
            "bytes of keys, requests and responses one session's idempotency cache holds", range: 1024...(1 << 30),
            \.maxIdempotencyBytesPerSession),
        integer(
            "--max-event-log-bytes", "MAX_EVENT_LOG_BYTES", "bytes of events one session keeps for replay", range: 1024...(1 << 30),
            \.maxEventLogBytes),
        integer(
            "--max-page-history-bytes", "MAX_PAGE_HISTORY_BYTES", "bytes of patches each page keeps for clients behind",
            range: 0...(1 << 30), \.maxPageHistoryBytes),
        integer(
            "--max-action-value-bytes", "MAX_ACTION_VALUE_BYTES", "largest action value (its compact JSON), in bytes",
            range: 16...(1 << 30), \.maxActionValueBytes),
        integer(
            "--max-session-bytes", "MAX_SESSION_BYTES", "bytes one session holds (views and page histories, event log, idempotency cache)",
            range: 4096...(1 << 40), \.maxSessionBytes),
        integer("--max-streams-per-session", "MAX_STREAMS_PER_SESSION", "most open event streams per session", range: 1...10_000, \.maxStreamsPerSession),
        integer("--max-streams-per-ip", "MAX_STREAMS_PER_IP", "most open event streams per address", range: 1...1_000_000, \.maxStreamsPerIP),
        // Durable sessions.
        Setting(
            flag: "--session-store", environment: "SESSION_STORE",
            summary: "sqlite:PATH, nats://HOST:PORT[,HOST:PORT…] (JetStream) or memory: where session logs are kept",
            current: { $0.sessionStore },
            apply: { configuration, text throws(ConfigurationError) in
                let value = text.trimmingSpaces
                guard
                    value == "memory" || (value.hasPrefix("sqlite:") && value.count > "sqlite:".count)
                        || NATSSessionStore.servers(in: value) != nil
                else {
                    throw ConfigurationError(
                        setting: "--session-store", message: "'\(text)' is not sqlite:PATH, nats://HOST:PORT[,HOST:PORT…] or memory.")
                }
                configuration.sessionStore = value
            }),
        Setting(
            flag: "--session-durability", environment: "SESSION_DURABILITY",
            summary: "process (survives kill -9) or machine (fsync per commit: survives power loss)",
            current: { $0.sessionDurability.rawValue },
            apply: { configuration, text throws(ConfigurationError) in
                guard let durability = SessionDurability(rawValue: text.trimmingSpaces.lowercased()) else {
                    throw ConfigurationError(setting: "--session-durability", message: "'\(text)' is not process or machine.")
                }
                configuration.sessionDurability = durability
            }),
        integer(
            "--nats-replicas", "NATS_REPLICAS", "with SESSION_STORE=nats://…: replicas of the JetStream stream and bucket it creates",
            range: 1...5, \.natsReplicas),
        integer(
            "--passivate-after-seconds", "PASSIVATE_AFTER_SECONDS",
            "idle time after which a session leaves memory (kept in the store, restored on its next request; 0: never)",
            range: 0...31_536_000, \.passivateAfterSeconds),
        integer(
            "--hibernate-after-seconds", "HIBERNATE_AFTER_SECONDS",
            "idle time after which a session's pages keep only their documents (bound again on their next action; 0: never)",
            range: 0...31_536_000, \.hibernateAfterSeconds),
        integer(
            "--max-page-records", "MAX_PAGE_RECORDS",
            "most action and topic records of a page replayed on restore (past it the page is bound fresh)",
            range: 1...100_000_000, \.maxPageRecords),
        integer(
            "--snapshot-after-records", "SNAPSHOT_AFTER_RECORDS",
            "records a session's log holds before the server compacts it into a snapshot (0: never)",
            range: 0...100_000_000, \.snapshotAfterRecords),
        Setting(
            flag: "--session-log", environment: "SESSION_LOG",
            summary: "on or off: whether GET /api/session/log answers with the session's log (all its client sent)",
            current: { $0.servesSessionLogs ? "on" : "off" },
            apply: { configuration, text throws(ConfigurationError) in
                switch text.trimmingSpaces.lowercased() {
                case "on": configuration.servesSessionLogs = true
                case "off": configuration.servesSessionLogs = false
                default: throw ConfigurationError(setting: "--session-log", message: "'\(text)' is not on or off.")
                }
            }),
    ]

    /// Reads the settings from flags and environment variables (a flag wins over its variable).
    ///
    /// Flags take their value as the next argument or after `=` (`--port 8080`, `--port=8080`).
    /// Arguments the server does not know are errors, except those in `passThrough`.
    /// - Parameters:
    ///   - arguments: the command line without the program name.
    ///   - environment: the environment variables.
    ///   - passThrough: flags (with no value) the caller handles itself, like `--help`.
    /// - Returns: the configuration.
    /// - Throws: ``ConfigurationError`` naming the setting and what is wrong.
    public static func parse(
        arguments: [String], environment: [String: String], passThrough: Set<String> = ["--help", "-h", "--healthcheck"]
    ) throws(ConfigurationError) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        var given: Set<String> = []
        for setting in settings {
            if let value = environment[setting.environment] {
                try setting.apply(&configuration, value)
                given.insert(setting.environment)
            }
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if passThrough.contains(argument) { continue }
            let name: String
            let inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            } else {
                name = argument
                inlineValue = nil
            }
            guard let setting = settings.first(where: { $0.flag == name }) else {
                throw ConfigurationError(setting: argument, message: "unknown option (see --help).")
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else {
                    throw ConfigurationError(setting: name, message: "needs a value.")
                }
                value = arguments[index]
                index += 1
            }
            try setting.apply(&configuration, value)
            given.insert(setting.environment)
        }
        // Behind a proxy every connection is the proxy's: a per-address connection limit would cap the whole site
        // (each event stream holds one upstream connection). Unless it was given, it is off there; the
        // per-client limits that read `X-Forwarded-For` (streams, new sessions) still apply.
        if configuration.trustForwardedHeaders && !given.contains("MAX_CONNECTIONS_PER_IP") {
            configuration.maxConnectionsPerIP = 0
        }
        return configuration
    }

    /// The environment variables the server reads, in `--help` order.
    public static var environmentVariableNames: [String] { settings.map(\.environment) }

    /// The `--help` text: every flag, its environment variable, what it does and its default.
    public static var helpText: String {
        let defaults = ServerConfiguration()
        var lines = ["Settings (a flag wins over its environment variable):", ""]
        for setting in settings {
            let current = setting.current(defaults)
            lines.append("  \(setting.flag) VALUE".padding(toLength: 40) + setting.environment)
            lines.append("      \(setting.summary) (default: \(current.isEmpty ? "none" : current))")
        }
        return lines.joined(separator: "\n")
    }
}

/// A setting that could not be read.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The flag (or argument) at fault.
    public var setting: String
    /// What is wrong with it.
    public var message: String

    /// Creates an error.
    /// - Parameters:
    ///   - setting: the flag at fault.
    ///   - message: what is wrong.
    public init(setting: String, message: String) {
        self.setting = setting
        self.message = message
    }

    /// `setting: message`.
    public var description: String { "\(setting): \(message)" }
}

extension String {
    var trimmingSpaces: String {
        let bytes = Array(utf8)
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 32 || bytes[start] == 9 || bytes[start] == 10 || bytes[start] == 13 { start += 1 }
        while end > start, bytes[end - 1] == 32 || bytes[end - 1] == 9 || bytes[end - 1] == 10 || bytes[end - 1] == 13 { end -= 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    func padding(toLength length: Int) -> String {
        count >= length ? self + " " : self + String(repeating: " ", count: length - count)
    }
}
