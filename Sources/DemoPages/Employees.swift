import MVVMR

// The employees page: on binding, the async `EmployeeService` loads the list (its result arrives as
// its own patch, pushed over SSE); `reload` shows "loading" again and loads anew. A failure shows its
// reason; the list loaded before stays until a load succeeds.
//
// View: {"status": "loading", "message": "Loading employees…", "employees": [], "count": 0}
//    → {"status": "loaded", "message": null, "employees": [{"id": 1, "employee_name": …}, …], "count": 24}
//    → {"status": "failed", "message": "Could not load employees: …", …}

/// Where the employees page stands, and the list it shows.
struct EmployeesState: Hashable {
    /// Whether a load is running, finished or failed.
    enum Status: String, Hashable {
        case loading, loaded, failed
    }

    /// The state before the first load answers.
    static let initial = EmployeesState(status: .loading, message: loadingMessage, employees: [])
    /// The message while loading.
    static let loadingMessage = "Loading employees…"

    /// Whether a load is running, finished or failed.
    var status: Status
    /// What to tell the user; nil once loaded.
    var message: String?
    /// The employees of the last successful load.
    var employees: [Employee]

    /// The state after `event`.
    /// - Parameter event: a load starting or finishing.
    func applying(_ event: EmployeesEvent) -> EmployeesState {
        var next = self
        switch event {
        case .loading:
            next.status = .loading
            next.message = Self.loadingMessage
        case .finished(.success(let employees)):
            next.status = .loaded
            next.message = nil
            next.employees = employees
        case .finished(.failure(let error)):
            next.status = .failed
            next.message = "Could not load employees: \(error)"
        }
        return next
    }
}

/// What happens to the employees page's load.
enum EmployeesEvent: Sendable {
    /// A load starts.
    case loading
    /// A load answered.
    case finished(Result<[Employee], any Error>)
}

/// The employees page's events.
struct EmployeesInput {
    /// The user asks to load the list again.
    let reload: Signal<Void>
}

/// What the employees page shows.
struct EmployeesOutput {
    /// "loading", "loaded" or "failed".
    let status: Driver<String>
    /// The loading message, the failure's reason, or nil.
    let message: Driver<String?>
    /// The employees (diffed by `id`).
    let employees: Driver<[Employee]>
    /// How many employees are listed.
    let count: Driver<Int>
}

/// Declares `reload`; writes `/status`, `/message`, `/employees` and `/count`.
struct EmployeesView: View {
    func input(from actions: Actions<NamedAction>) -> EmployeesInput {
        EmployeesInput(reload: actions.signal("reload"))
    }

    func bind(_ output: EmployeesOutput, to page: Page) {
        page.bind(output.status, at: "/status")
        page.bind(output.message, at: "/message")
        page.bind(output.employees, at: "/employees")
        page.bind(output.count, at: "/count")
    }
}

/// Loads the employees when the page is bound and on `reload`; a newer load cancels an older one.
final class EmployeesViewModel: ViewModel {
    private let service: any EmployeeService
    private let scheduler: Scheduler

    init(context: UnitContext) throws {
        service = try context.services.require((any EmployeeService).self)
        scheduler = context.scheduler
    }

    func transform(_ input: EmployeesInput) -> EmployeesOutput {
        let service = self.service
        let scheduler = self.scheduler
        let events = input.reload.startWith(())
            .flatMapLatest { _ in
                scheduler.performCatchingErrors { try await service.employees() }
                    .map(EmployeesEvent.finished)
                    .startWith(.loading)
            }
        let state = events.scan(EmployeesState.initial) { $0.applying($1) }
            .asDriver(startingWith: .initial)
        return EmployeesOutput(
            status: state.map(\.status.rawValue),
            message: state.map(\.message),
            employees: state.map(\.employees),
            count: state.map(\.employees.count))
    }
}

extension UnitCase {
    /// The employees page, loaded by an async service: `reload`.
    public static let employees = UnitCase("employees", view: EmployeesView.self, viewModel: EmployeesViewModel.self)
}
