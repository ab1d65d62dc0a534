import JSONPatch
import Locking
import MVVMR
import MVVMRProtocol
import MicroHTTP
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An MVVMR application served over HTTP: the unit cases, the root unit and the services, behind the
/// page protocol (docs/PROTOCOL.md): sessions, pages, actions answered with JSON Patches, Server-Sent
/// Events, navigation, OpenAPI, health and metrics.
///
/// ```swift
/// let server = PageServer(
///     units: [.greeting, .counters], root: .greeting, services: services,
///     configuration: try ServerConfiguration.parse(arguments: [], environment: [:]))
/// try server.start()
/// server.runUntilStopSignal()   // SIGTERM/SIGINT: graceful stop
/// ```
public final class PageServer: Sendable {
    /// The settings the server runs with.
    public let configuration: ServerConfiguration
    let registry: UnitRegistry
    let services: Services
    let sessions: SessionTable<ServerSession>
    /// Where every session's input log is kept.
    let store: any SessionStore
    /// Restores of one session id are serialized (by a stripe of its id), different ids run in parallel.
    let restoreLocks: [Locked<Void>] = (0..<64).map { _ in Locked(()) }
    /// When the sweeper hands freed memory back to the operating system.
    let sweepTrimming = Locked(SweepTrimming())
    let logger: Logger
    let metrics = MetricsRegistry()
    let originPolicy: OriginPolicy
    let newSessionLimiter: NewSessionRateLimiter
    /// What each session may hold, from the configuration.
    let sessionLimits: SessionLimits
    /// The same limits, as the one reference every session holds.
    /// What every session of this server shares: its limits, its store, its compaction.
    let sessionEnvironment: SessionEnvironment
    let streamsPerAddress: OpenStreamsPerAddress
    let staticFiles: StaticFiles
    let unitsBody: [UInt8]
    let openAPIBody: [UInt8]
    private let http = Locked<HTTPServer?>(nil)
    private let sweeper = Locked<Task<Void, Never>?>(nil)
    let draining = Atomic<Bool>(false)
    let openStreams = Atomic<Int>(0)

    let requestCounter: Counter
    let actionCounter: Counter
    let actionLatency: Histogram
    let patchBytes: Counter
    let evictions: Counter
    /// What the routes need of each unit, by name: one lookup per page read or action finds the unit, its
    /// encoded actions and its metric series (looked up once at start, so an action counts itself without a
    /// lock on the metric's whole table).
    let servedUnits: NameTable<ServedUnit>
    let expirations: Counter
    let restores: Counter
    /// Copies dropped because another node restored their session (`mvvmr_session_takeovers_total`).
    let takeovers: Counter
    /// Restores that loaded a session again because another node wrote to it between the load and the claim
    /// (`mvvmr_session_claims_refused_total`).
    let claimsRefused: Counter
    /// Requests run again because the session's copy they found was set aside under them
    /// (`mvvmr_session_setaside_reruns_total`).
    let setAsideReruns: Counter
    let passivations: Counter
    /// Pages that began to hibernate (`mvvmr_page_hibernations_total`).
    let hibernations: Counter
    let divergences: Counter
    let pageResets: Counter
    let storeFailures: Counter
    /// When and where sessions' logs are compacted (`SNAPSHOT_AFTER_RECORDS`), with its counter.
    let compaction: SessionCompaction
    /// Which live sessions listen to which topic, over the topic bus.
    let topicFanout: TopicFanout

    /// Creates a server; nothing listens until ``start()``.
    /// - Parameters:
    ///   - units: every unit case the app serves (the root among them, or added).
    ///   - root: the unit a new session starts at.
    ///   - services: the Model layer, handed to every ViewModel.
    ///   - configuration: the settings.
    ///   - logger: where request lines go; standard output at the configured level by default.
    ///   - store: where sessions' input logs are kept; in memory by default.
    ///   - topicBus: what carries topic messages between sessions (and nodes); an ``InProcessTopicBus`` (this
    ///     node only) by default.
    public init(
        units: [UnitCase], root: UnitCase, services: Services = Services(),
        configuration: ServerConfiguration = ServerConfiguration(), logger: Logger? = nil,
        store: (any SessionStore)? = nil, topicBus: (any TopicBus)? = nil
    ) {
        self.store = store ?? MemorySessionStore()
        let allUnits = units.contains(root) ? units : [root] + units
        registry = UnitRegistry(root: root, units: allUnits)
        self.services = services
        self.configuration = configuration
        self.logger = logger ?? Logger(level: configuration.logLevel)
        sessions = SessionTable(capacity: configuration.maxSessions)
        originPolicy = OriginPolicy(
            publicOrigin: configuration.publicOrigin.isEmpty ? nil : configuration.publicOrigin,
            allowedOrigins: configuration.allowedOrigins)
        newSessionLimiter = NewSessionRateLimiter(limitPerMinute: configuration.newSessionsPerIPPerMinute)
        sessionLimits = SessionLimits(configuration)
        streamsPerAddress = OpenStreamsPerAddress(limit: configuration.maxStreamsPerIP)
        staticFiles = StaticFiles(directory: configuration.publicDirectory)
        unitsBody = Self.unitsDocument(registry).jsonBytes
        openAPIBody = OpenAPIDocument.make(registry: registry, maxIdempotencyKeyBytes: configuration.maxIdempotencyKeyBytes).jsonBytes

        requestCounter = metrics.counter(
            "mvvmr_http_requests_total", help: "HTTP requests by route and status.", labelNames: ["route", "status"])
        actionCounter = metrics.counter(
            "mvvmr_actions_total", help: "Actions by unit, action and status.", labelNames: ["unit", "action", "status"])
        actionLatency = metrics.histogram(
            "mvvmr_action_duration_seconds", help: "Time to handle an action request.", labelNames: ["unit"],
            buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1])
        patchBytes = metrics.counter(
            "mvvmr_patch_bytes_total", help: "Bytes of action responses that carried a JSON Patch.", labelNames: ["unit"])
        var servedUnits: [(name: String, value: ServedUnit)] = []
        // The registry's units have distinct names (it leaves a later one out).
        for unit in registry.units {
            var actionsOK: [(name: String, value: CounterSeries)] = []
            for descriptor in unit.actions {
                actionsOK.append((descriptor.name, actionCounter.series([unit.name, descriptor.name, "ok"])))
            }
            servedUnits.append((unit.name, ServedUnit(
                unit: unit, encodedActions: WireAction.encodedList(unit.actions.map(\.wire)),
                metrics: UnitMetrics(
                    actionsOK: NameTable(actionsOK), latency: actionLatency.series([unit.name]),
                    patchBytes: patchBytes.series([unit.name])))))
        }
        self.servedUnits = NameTable(servedUnits)
        evictions = metrics.counter("mvvmr_session_evictions_total", help: "Sessions evicted to make room.")
        expirations = metrics.counter("mvvmr_session_expirations_total", help: "Sessions expired after their idle time.")
        restores = metrics.counter("mvvmr_session_restores_total", help: "Sessions restored from the store by replaying their logs.")
        takeovers = metrics.counter(
            "mvvmr_session_takeovers_total", help: "Copies of sessions dropped because another node restored them.")
        claimsRefused = metrics.counter(
            "mvvmr_session_claims_refused_total",
            help: "Restores that loaded a session again because another node wrote to it after it was loaded.")
        setAsideReruns = metrics.counter(
            "mvvmr_session_setaside_reruns_total",
            help: "Requests run again on a session restored from the store because the copy they found was set aside under them.")
        passivations = metrics.counter("mvvmr_session_passivations_total", help: "Idle sessions taken out of memory (kept in the store).")
        hibernations = metrics.counter(
            "mvvmr_page_hibernations_total",
            help: "Pages of idle sessions that began to hibernate (only their documents kept until their next action).")
        divergences = metrics.counter(
            "mvvmr_session_divergences_total", help: "Pages whose replay did not match their log (code changed): bound fresh.")
        pageResets = metrics.counter(
            "mvvmr_session_page_resets_total",
            help: "Pages bound fresh on restore because their logs passed MAX_PAGE_RECORDS actions.")
        storeFailures = metrics.counter(
            "mvvmr_store_failures_total", help: "Inputs refused because the session store could not keep them.")
        compaction = SessionCompaction(
            afterRecords: self.store.keepsSessions ? configuration.snapshotAfterRecords : 0,
            recordCap: configuration.maxPageRecords,
            compactions: metrics.counter(
                "mvvmr_session_compactions_total",
                help: "Session logs compacted: a snapshot saved in place of the records it stands for."),
            logger: self.logger)
        topicFanout = TopicFanout(
            bus: topicBus ?? InProcessTopicBus(),
            published: metrics.counter(
                "mvvmr_topic_messages_published_total", help: "Topic messages published by this node's sessions."),
            delivered: metrics.counter(
                "mvvmr_topic_messages_delivered_total",
                help: "Topic messages taken by this node's sessions as inputs (one per session)."))
        sessionEnvironment = SessionEnvironment(
            registry: registry, services: services, limits: sessionLimits, store: self.store, compaction: compaction,
            topicFanout: topicFanout)
        metrics.gauge("mvvmr_sessions_live", help: "Live sessions.") { [sessions] in Double(sessions.count) }
        metrics.counter(
            "mvvmr_log_lines_dropped_total", help: "Log lines dropped because standard output did not take them in time."
        ) { Double(LogWriter.standardOutput.droppedLineCount) }
        metrics.gauge("mvvmr_pages_live", help: "Live pages across all sessions.") { [sessions] in
            Double(sessions.allEntries().reduce(0) { $0 + $1.pages.livePageCount })
        }
        metrics.gauge("mvvmr_sessions_stored", help: "Sessions in the session store (in memory or passivated).") {
            [store = self.store] in Double((try? store.sessionCount()) ?? 0)
        }
        metrics.gauge("mvvmr_sse_clients", help: "Open event streams.") { [weak self] in
            Double(self?.openStreams.load(ordering: .relaxed) ?? 0)
        }
    }

    /// Publishes `value` on `topic` from outside any session (a service, a job): every live session on every node
    /// whose pages listen to the topic receives it as an input.
    /// - Parameters:
    ///   - value: the value.
    ///   - topic: the topic.
    /// - Throws: `JSONValueCodingError` when the value cannot be encoded as JSON.
    public func publish<Value>(_ value: Value, on topic: Topic<Value>) throws(JSONValueCodingError) {
        topicFanout.publish(TopicMessage(topic: topic.name, value: try JSONValueEncoder().encode(value)))
    }

    /// The port the server listens on (the real one when configured with port 0); 0 before ``start()``.
    public var port: Int { http.withLock { $0?.port ?? 0 } }

    /// Whether the server is stopping (`/readyz` answers 503).
    public var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// Starts listening, and the sweeper that expires idle sessions.
    /// - Throws: `HTTPServerError` when the address cannot be used.
    public func start() throws(HTTPServerError) {
        if !registry.problems.isEmpty {
            throw HTTPServerError(
                code: "invalid_units", message: "the app's units have mistakes: " + registry.problems.joined(separator: "; "))
        }
        var httpConfiguration = HTTPServerConfiguration()
        httpConfiguration.host = configuration.host
        httpConfiguration.port = configuration.port
        if configuration.threads > 0 { httpConfiguration.threadCount = configuration.threads }
        httpConfiguration.maxBodyBytes = configuration.maxBodyBytes
        httpConfiguration.maxHeaderBytes = configuration.maxHeaderBytes
        httpConfiguration.maxConnections = configuration.maxConnections
        httpConfiguration.maxConnectionsPerIP = configuration.maxConnectionsPerIP
        httpConfiguration.connectionTimeoutSeconds = configuration.connectionTimeoutSeconds
        httpConfiguration.requestHeaderTimeoutSeconds = configuration.requestHeaderTimeoutSeconds
        httpConfiguration.requestBodyTimeoutSeconds = configuration.requestBodyTimeoutSeconds
        httpConfiguration.heartbeatInterval = .seconds(configuration.heartbeatSeconds)
        // Another node that restored one of our sessions holds it now: drop our copy (see `dropCopyTakenOver`).
        store.observeOwnership { [weak self] identifier, claim in self?.dropCopyTakenOver(identifier, claim: claim) }
        let server = HTTPServer(configuration: httpConfiguration, router: makeRouter())
        try server.start()
        http.withLock { $0 = server }
        let timeToLive = Duration.seconds(configuration.sessionTimeToLiveSeconds)
        let passivateAfter = configuration.passivateAfterSeconds > 0 ? Duration.seconds(configuration.passivateAfterSeconds) : nil
        let hibernateAfter = configuration.hibernateAfterSeconds > 0 ? Duration.seconds(configuration.hibernateAfterSeconds) : nil
        let shortest = min(configuration.sessionTimeToLiveSeconds, configuration.passivateAfterSeconds > 0 ? configuration.passivateAfterSeconds : .max)
        // Sessions are expired (with the store's queries) on their own schedule, and pages hibernate on theirs: a
        // short HIBERNATE_AFTER_SECONDS does not make the store's sweep run more often.
        let expiryInterval = Self.sweepSeconds(forIdleSeconds: shortest)
        let tick = min(
            expiryInterval,
            configuration.hibernateAfterSeconds > 0 ? Self.sweepSeconds(forIdleSeconds: configuration.hibernateAfterSeconds) : .max)
        let task = Task.detached { [weak self] in
            var sinceExpiry = 0
            while !Task.isCancelled {
                do { try await Task.sleep(for: .seconds(tick)) } catch { return }
                sinceExpiry += tick
                let expiring = sinceExpiry >= expiryInterval
                if expiring { sinceExpiry = 0 }
                self?.sweepIdleSessions(
                    timeToLive: timeToLive, passivateAfter: passivateAfter, hibernateAfter: hibernateAfter,
                    expiring: expiring)
            }
        }
        sweeper.withLock { $0 = task }
        logger.log(.info, "listening", [("host", .string(configuration.host)), ("port", .int(server.port))])
    }

    /// How often a sweep looks for what has been idle `idleSeconds`: four times in that time, every 1 to 30 seconds.
    static func sweepSeconds(forIdleSeconds idleSeconds: Int) -> Int {
        max(1, min(30, idleSeconds / 4))
    }

    /// Stops gracefully: `/readyz` turns 503, no new connections are accepted, requests in flight finish
    /// (within `gracePeriod`), event streams end. Blocks until done.
    /// - Parameter gracePeriod: the time requests in flight get; the configured one by default.
    public func stop(gracePeriod: Duration? = nil) {
        draining.store(true, ordering: .relaxed)
        logger.log(.info, "stopping")
        sweeper.withLock { task in
            task?.cancel()
            task = nil
        }
        let server = http.withLock { $0 }
        server?.stop(gracePeriod: gracePeriod ?? .seconds(configuration.shutdownGraceSeconds))
        // Every input acknowledged is stored already; this completes those whose answers were cut off.
        store.flush()
        logger.log(.info, "stopped")
        logger.flush()
    }

    /// Blocks until SIGTERM or SIGINT, then stops gracefully. Call ``blockStopSignals()`` before starting
    /// any thread (first thing in `main`), so that only this wait receives them.
    public func runUntilStopSignal() {
        var signals = Self.stopSignals
        var received: Int32 = 0
        sigwait(&signals, &received)
        stop()
    }

    /// Blocks SIGTERM and SIGINT in the calling thread and every thread it starts afterwards, so that
    /// ``runUntilStopSignal()`` receives them with `sigwait`.
    public static func blockStopSignals() {
        var signals = stopSignals
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    private static var stopSignals: sigset_t {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        return signals
    }

    static func unitsDocument(_ registry: UnitRegistry) -> WireUnits {
        WireUnits(
            root: registry.root.name,
            units: registry.units.map { unit in
                WireUnit(name: unit.name, route: unit.route, entry: unit.entry.rawValue, actions: unit.actions.map(\.wire))
            })
    }
}

/// A unit as the routes serve it (a class: a request takes one reference, not one for each of its parts,
/// which both worker threads would otherwise count up and down at once).
final class ServedUnit: Sendable {
    let unit: UnitCase
    /// The unit's `actions` as JSON: every page read embeds them.
    let encodedActions: [UInt8]
    let metrics: UnitMetrics

    init(unit: UnitCase, encodedActions: [UInt8], metrics: UnitMetrics) {
        self.unit = unit
        self.encodedActions = encodedActions
        self.metrics = metrics
    }
}

/// The metric series of one unit's actions.
final class UnitMetrics: Sendable {
    /// `mvvmr_actions_total{unit, action, status="ok"}` by action name.
    let actionsOK: NameTable<CounterSeries>
    /// `mvvmr_action_duration_seconds{unit}`.
    let latency: HistogramSeries
    /// `mvvmr_patch_bytes_total{unit}`.
    let patchBytes: CounterSeries

    init(actionsOK: NameTable<CounterSeries>, latency: HistogramSeries, patchBytes: CounterSeries) {
        self.actionsOK = actionsOK
        self.latency = latency
        self.patchBytes = patchBytes
    }

    /// The `action` label for an action of this unit: its name when the unit declares it, else
    /// ``MetricLabel/unknown`` (a client chooses the name; only the app's own names become series).
    func actionLabel(_ action: String) -> String {
        actionsOK[action] == nil ? MetricLabel.unknown : action
    }
}
