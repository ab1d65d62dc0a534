/// How much the server logs, from everything (`debug`) to nothing (`off`).
public enum LogLevel: String, Sendable, Comparable, CaseIterable {
    /// Everything, including each request.
    case debug
    /// Each request and lifecycle events.
    case info
    /// Requests that failed on the client's side (4xx), and anything odd.
    case warning
    /// Server failures (5xx) only.
    case error
    /// Nothing.
    case off

    private var rank: Int {
        switch self {
        case .debug: 0
        case .info: 1
        case .warning: 2
        case .error: 3
        case .off: 4
        }
    }

    /// Orders levels by severity.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
}
