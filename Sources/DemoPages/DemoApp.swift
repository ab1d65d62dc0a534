import MVVMR

/// The demo app: its pages, its root, and its Model layer, for the server's `main.swift`:
///
/// ```swift
/// let registry = UnitRegistry(root: DemoApp.root, units: DemoApp.units)
/// let services = DemoApp.services(dataDirectory: "Data")   // reads Data/employees.json
/// ```
///
/// Pages and their actions are specified in docs/DEMO.md.
public enum DemoApp {
    /// The first page of a session: the menu.
    public static let root: UnitCase = .home

    /// Every page a client can open, root first. The dashboard's parts are not pages of their own.
    public static let units: [UnitCase] = [
        .home, .greeting, .demo, .login, .main, .settings, .employees, .counters, .dashboard, .board,
    ]

    /// The registry of `units` with `root`.
    public static var registry: UnitRegistry { UnitRegistry(root: root, units: units) }

    /// The name of the employees data file inside the data directory.
    public static let employeesFileName = "employees.json"

    /// The Model layer of the demo: the greeted person, the sign-in check, the employees read from
    /// `dataDirectory/employees.json`, the counter pages, the dashboard's clock, randomness and
    /// activities.
    /// - Parameters:
    ///   - employeeLatency: the simulated latency of each employees load.
    ///   - counterLatency: the simulated latency of each page of counters after the first.
    ///   - authLatency: the simulated latency of each sign-in check.
    ///   - dataDirectory: the directory holding `employees.json` (the repository's `Data/`).
    public static func services(
        employeeLatency: Duration = .milliseconds(300), counterLatency: Duration = .milliseconds(200),
        authLatency: Duration = .milliseconds(100), dataDirectory: String
    ) -> Services {
        var services = Services()
        services.register(Person(firstName: "David", lastName: "Blaine"))
        services.register(DemoAuthService(latency: authLatency) as any AuthService, as: (any AuthService).self)
        let path =
            dataDirectory.hasSuffix("/") ? dataDirectory + employeesFileName : dataDirectory + "/" + employeesFileName
        services.register(
            FileEmployeeService(path: path, latency: employeeLatency) as any EmployeeService,
            as: (any EmployeeService).self)
        services.register(
            GeneratedCounterPages(latency: counterLatency) as any CounterPagesService,
            as: (any CounterPagesService).self)
        // No wall clock and no random source: the dashboard reads the session's (`context.scheduler.wallClock`,
        // `context.random`), which its log keeps, so a restored dashboard shows what it showed.
        return services
    }
}
