/// Opens the session store a configuration names (`SESSION_STORE`, `SESSION_DURABILITY`).
public enum SessionStores {
    /// The store of `configuration`: `memory` (a ``TransientSessionStore``: sessions in memory only), or the
    /// SQLite file of `sqlite:PATH` (made with its directory when missing; a relative path is under the working
    /// directory).
    /// - Parameter configuration: the server's settings.
    /// - Throws: ``SessionStoreError`` when the file cannot be opened or is not a session store.
    public static func open(_ configuration: ServerConfiguration) throws(SessionStoreError) -> any SessionStore {
        let name = configuration.sessionStore
        if name == "memory" { return TransientSessionStore() }
        guard name.hasPrefix("sqlite:") else {
            throw SessionStoreError(.unavailable, "'\(name)' is not sqlite:PATH or memory")
        }
        let path = String(name.dropFirst("sqlite:".count))
        return try SQLiteSessionStore(path: path, durability: configuration.sessionDurability)
    }
}
