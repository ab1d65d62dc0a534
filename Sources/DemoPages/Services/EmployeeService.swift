/// Loads the employees of the employees page: an async Model call that may fail.
///
/// Register an implementation under the existential:
/// `services.register(FileEmployeeService(path: path) as any EmployeeService, as: (any EmployeeService).self)`.
public protocol EmployeeService: Sendable {
    /// Every employee, in the order of the data source.
    /// - Throws: when the data cannot be read; the page shows the error's description.
    func employees() async throws -> [Employee]
}
