/// Why the employees could not be loaded; its description is shown after "Could not load employees: ".
public enum EmployeeLoadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The data file could not be opened or read.
    case unreadable(path: String, errno: Int32)
    /// The data file is not a JSON array of employees.
    case malformed(path: String, reason: String)
    /// The service is unavailable (used by fakes and outages).
    case unavailable(String)

    /// A sentence for people.
    public var description: String {
        switch self {
        case .unreadable(let path, let errno): "cannot read \(path) (errno \(errno))"
        case .malformed(let path, let reason): "\(path) is not a list of employees: \(reason)"
        case .unavailable(let reason): reason
        }
    }
}
