import Dispatch
import MVVMR

/// When and where a server compacts its sessions' logs: once a session's store holds ``afterRecords`` records
/// since its last snapshot, a snapshot of it is taken and saved on ``queue``, off the request path and never
/// from a store's completion (a store may wait for its own writer there).
final class SessionCompaction: Sendable {
    /// Records since the last snapshot that start a compaction (`SNAPSHOT_AFTER_RECORDS`); 0: never.
    let afterRecords: Int
    /// The page record cap (`MAX_PAGE_RECORDS`): a page without a saved state past it is bound fresh on restore.
    let recordCap: Int
    /// After a session could not be written down (a page not at a quiet point, a timer pending), how many more
    /// records before it is tried again.
    let retryAfterRecords: Int
    /// Counts compactions saved (`mvvmr_session_compactions_total`).
    let compactions: Counter
    let logger: Logger
    /// One serial queue for the server's compactions: they wait for the store, one at a time.
    let queue = DispatchQueue(label: "mvvmr.session-compaction", qos: .utility)

    init(afterRecords: Int, recordCap: Int, compactions: Counter, logger: Logger) {
        self.afterRecords = afterRecords
        self.recordCap = recordCap
        retryAfterRecords = max(1, min(afterRecords, 32))
        self.compactions = compactions
        self.logger = logger
    }
}
