/// Opens the session store a configuration names (`SESSION_STORE`, `SESSION_DURABILITY`).
public enum SessionStores {
    /// The store of `configuration`: `memory` (a ``TransientSessionStore``: sessions in memory only), the
    /// SQLite file of `sqlite:PATH` (made with its directory when missing; a relative path is under the working
    /// directory), or NATS JetStream at `nats://host:port[,host:port…]` (a ``NATSSessionStore``, `NATS_REPLICAS`
    /// replicas; its activity keys live twice `SESSION_TTL_SECONDS`, at least an hour, so that the server's own
    /// expiry finds them first).
    /// - Parameter configuration: the server's settings.
    /// - Throws: ``SessionStoreError`` when the file cannot be opened or is not a session store, or no NATS server
    ///   can be reached, or NATS is asked for `machine` durability (JetStream's servers decide when they sync).
    public static func open(_ configuration: ServerConfiguration) throws(SessionStoreError) -> any SessionStore {
        let name = configuration.sessionStore
        if name == "memory" { return TransientSessionStore() }
        if let servers = NATSSessionStore.servers(in: name) {
            guard configuration.sessionDurability == .process else {
                // This node cannot make JetStream sync: the servers' own settings decide (nats-server syncs its file
                // store every two minutes by default), so promising `machine` would be untrue.
                throw SessionStoreError(
                    .unavailable,
                    "SESSION_DURABILITY=machine is not available with NATS: JetStream's servers decide when they sync "
                        + "(run several with NATS_REPLICAS=3 to survive the loss of one)")
            }
            var settings = NATSSessionStore.Settings(servers: servers)
            settings.replicas = configuration.natsReplicas
            settings.activityTimeToLiveSeconds = max(3_600, 2 * Int64(configuration.sessionTimeToLiveSeconds))
            return try NATSSessionStore(settings)
        }
        guard name.hasPrefix("sqlite:") else {
            throw SessionStoreError(.unavailable, "'\(name)' is not sqlite:PATH, nats://HOST:PORT or memory")
        }
        let path = String(name.dropFirst("sqlite:".count))
        return try SQLiteSessionStore(path: path, durability: configuration.sessionDurability)
    }
}

/// Opens the topic bus that goes with a configuration's session store.
public enum TopicBuses {
    /// With `SESSION_STORE=nats://…`, a ``NATSTopicBus`` on the same servers (topics reach every node's sessions);
    /// otherwise an ``InProcessTopicBus`` (this node's sessions).
    /// - Parameter configuration: the server's settings.
    /// - Throws: ``SessionStoreError`` when the NATS server list is unusable.
    public static func open(_ configuration: ServerConfiguration) throws(SessionStoreError) -> any TopicBus {
        if let servers = NATSSessionStore.servers(in: configuration.sessionStore) {
            return try NATSTopicBus(servers: servers)
        }
        return InProcessTopicBus()
    }
}
