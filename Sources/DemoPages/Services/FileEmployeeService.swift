import JSONPatch

/// Reads the employees from a JSON file (an array of objects with `id`, `employee_name`,
/// `employee_salary`, `employee_age`, `profile_image`) after a simulated network latency.
///
/// The file is read anew on every call, with plain POSIX reads, so editing it changes the next load.
public struct FileEmployeeService: EmployeeService {
    /// The data file's path.
    public let path: String
    /// How long each load waits before reading, to simulate a network call.
    public let latency: Duration

    /// A service reading `path`.
    /// - Parameters:
    ///   - path: the JSON file, e.g. `Data/employees.json`.
    ///   - latency: the simulated latency; zero reads at once.
    public init(path: String, latency: Duration = .milliseconds(300)) {
        self.path = path
        self.latency = latency
    }

    /// Waits `latency`, then reads and parses the file.
    /// - Throws: `EmployeeLoadError.unreadable` or `.malformed`.
    public func employees() async throws -> [Employee] {
        if latency > .zero { try await Task.sleep(for: latency) }
        let bytes = try TextFile.contents(of: path)
        let json: JSONValue
        do {
            json = try JSONValue(parsing: bytes)
        } catch {
            throw EmployeeLoadError.malformed(path: path, reason: "\(error)")
        }
        guard let elements = json.arrayValue else {
            throw EmployeeLoadError.malformed(path: path, reason: "the top level is not an array")
        }
        var employees: [Employee] = []
        employees.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard let employee = Employee(json: element) else {
                throw EmployeeLoadError.malformed(path: path, reason: "element \(index) lacks a field")
            }
            employees.append(employee)
        }
        return employees
    }
}
