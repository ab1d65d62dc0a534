import MVVMR

/// What every session of one server shares: its units and services, its limits, its store, and when its logs are
/// compacted. Each session holds one reference to it rather than its own copies (the limits alone are 88 bytes, the
/// store an existential of 16), since an idle session should cost as little as possible (BENCHMARKS.md, memory).
final class SessionEnvironment: Sendable {
    /// What each session may hold.
    let limits: SessionLimits
    /// Where the sessions' input logs go.
    let store: any SessionStore
    /// When a session's log is compacted into a snapshot; nil: never.
    let compaction: SessionCompaction?
    /// What the sessions' pages are made from (the registry and services) and the history each keeps.
    let pageSettings: PageSessionSettings
    /// Where the sessions' topic subscriptions and publications go once they join the topics; nil: nowhere (a
    /// session made outside a server).
    let topicFanout: TopicFanout?

    /// The environment of a server's sessions.
    /// - Parameters:
    ///   - registry: the app's units.
    ///   - services: the Model layer handed to ViewModels.
    ///   - limits: what each session may hold.
    ///   - store: where their logs go.
    ///   - compaction: when a log is compacted; nil, or one that compacts after no records, for never.
    ///   - topicFanout: where the sessions' topics go once they join them.
    init(
        registry: UnitRegistry, services: Services, limits: SessionLimits, store: any SessionStore,
        compaction: SessionCompaction? = nil, topicFanout: TopicFanout? = nil
    ) {
        self.topicFanout = topicFanout
        self.limits = limits
        self.store = store
        self.compaction = compaction.flatMap { $0.afterRecords > 0 ? $0 : nil }
        pageSettings = PageSessionSettings(
            registry: registry, services: services, historyByteLimit: limits.pageHistoryBytes)
    }
}
