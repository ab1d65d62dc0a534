import JSONPatch

/// What a session was at an input boundary, standing for every record of its log up to ``number``: enough to
/// go on exactly as the log would have (the same views, revisions, event numbers, random numbers and timer
/// ordinals), so a store keeps it instead of those records (compaction). See ``PageSession/takeSnapshot(annotation:recordCap:)``
/// and ``PageSession/restore(from:records:recordCap:replayed:)``; its JSON is in docs/PROTOCOL.md ("Session
/// snapshots").
public struct SessionSnapshot: Sendable, Hashable {
    /// How a live page comes back from the snapshot.
    public enum Restoration: Sendable, Hashable {
        /// From its ViewModels' saved states (``RestorableViewModel``), the page's first, then its parts'.
        case savedStates([JSONValue])
        /// Bound again as it was first bound: nothing reached it since (no action, callback, timer or job).
        case bindAgain
        /// Bound fresh (its clients get a snapshot, counted as a page reset): it has no saved state and its
        /// log passed the page record cap, so a restore from the log would have bound it fresh too.
        case boundFresh
    }

    /// One live page.
    public struct SavedPage: Sendable, Hashable {
        /// Its unit's name.
        public let unit: String
        /// The route parameters it was bound with.
        public let parameters: [String: String]
        /// The value its router sent it, if any.
        public let sentValue: JSONValue?
        /// Its revision.
        public let revision: Int
        /// A digest (FNV-1a, 64 bits) of its view's compact JSON text: the restored page must match it.
        public let viewDigest: UInt64
        /// Where its random numbers go on from (the generator's state; its seed for ``Restoration/bindAgain``).
        public let random: UInt64
        /// How it comes back.
        public let restoration: Restoration

        /// A saved page.
        /// - Parameters:
        ///   - unit: its unit's name.
        ///   - parameters: its route parameters.
        ///   - sentValue: the value sent to it.
        ///   - revision: its revision.
        ///   - viewDigest: its view's digest.
        ///   - random: its random generator's state.
        ///   - restoration: how it comes back.
        public init(
            unit: String, parameters: [String: String], sentValue: JSONValue?, revision: Int, viewDigest: UInt64,
            random: UInt64, restoration: Restoration
        ) {
            self.unit = unit
            self.parameters = parameters
            self.sentValue = sentValue
            self.revision = revision
            self.viewDigest = viewDigest
            self.random = random
            self.restoration = restoration
        }
    }

    /// One entry of the navigation stack.
    public struct StackEntry: Sendable, Hashable {
        /// The page's unit name.
        public let unit: String
        /// Whether it was presented (rather than pushed).
        public let presented: Bool

        /// A stack entry.
        /// - Parameters:
        ///   - unit: the page's unit name.
        ///   - presented: whether it was presented.
        public init(unit: String, presented: Bool) {
            self.unit = unit
            self.presented = presented
        }
    }

    /// The number of the last record the snapshot stands for (the session's input number when it was taken).
    public let number: Int
    /// The session clock's reading.
    public let time: Duration
    /// The session's latest event number.
    public let sequence: Int
    /// The seed of the session's pages (from its start record).
    public let seed: UInt64
    /// The wall clock's reading at the session clock's zero (from its start record).
    public let wallClock: Duration
    /// How many pages the session bound (each page's random seed comes from the seed and this count).
    public let bindCount: Int
    /// The scheduler's next timer and job ordinal.
    public let nextOrdinal: Int
    /// The navigation stack, bottom first.
    public let stack: [StackEntry]
    /// The forward list (pages popped by `back`, still bound, among ``pages``), nearest first.
    public let forward: [StackEntry]
    /// Every live page, in the session's order (those in the stack and those bound outside it).
    public let pages: [SavedPage]
    /// The last revision of every unit the session bound and released (a page bound later goes on from it).
    public let revisions: [String: Int]
    /// Whatever the taker attached (a server keeps its recent idempotent answers here); not interpreted.
    public let annotation: JSONValue?

    /// A snapshot as a session takes it, or as read back from its JSON.
    /// - Parameters:
    ///   - number: the last record it stands for.
    ///   - time: the session clock's reading.
    ///   - sequence: the latest event number.
    ///   - seed: the pages' seed.
    ///   - wallClock: the wall clock at the session clock's zero.
    ///   - bindCount: how many pages were bound.
    ///   - nextOrdinal: the scheduler's next ordinal.
    ///   - stack: the navigation stack.
    ///   - forward: the forward list, nearest first.
    ///   - pages: the live pages.
    ///   - revisions: released units' last revisions.
    ///   - annotation: the taker's attachment.
    public init(
        number: Int, time: Duration, sequence: Int, seed: UInt64, wallClock: Duration, bindCount: Int,
        nextOrdinal: Int, stack: [StackEntry], forward: [StackEntry] = [], pages: [SavedPage], revisions: [String: Int],
        annotation: JSONValue?
    ) {
        self.number = number
        self.time = time
        self.sequence = sequence
        self.seed = seed
        self.wallClock = wallClock
        self.bindCount = bindCount
        self.nextOrdinal = nextOrdinal
        self.stack = stack
        self.forward = forward
        self.pages = pages
        self.revisions = revisions
        self.annotation = annotation
    }

    /// The snapshot with another annotation.
    /// - Parameter annotation: the new attachment.
    public func annotated(_ annotation: JSONValue?) -> SessionSnapshot {
        SessionSnapshot(
            number: number, time: time, sequence: sequence, seed: seed, wallClock: wallClock, bindCount: bindCount,
            nextOrdinal: nextOrdinal, stack: stack, forward: forward, pages: pages, revisions: revisions,
            annotation: annotation)
    }
}
