import MVVMR

// The employees page: on binding, the async `EmployeeService` loads the list (its result arrives as
// its own patch, pushed over SSE); `reload` shows "loading" again and loads anew. A failure shows its
// reason; the list loaded before stays until a load succeeds.
//
// View: {"status": "loading", "message": "Loading employees…", "employees": [], "count": 0}
//    → {"status": "loaded", "message": null, "employees": [{"id": 1, "employee_name": …}, …], "count": 24}
//    → {"status": "failed", "message": "Could not load employees: …", …}

/// What the employees page shows: how the loading stands, and the list.
struct EmployeesState: Codable, Equatable, Sendable {
    /// How a load stands.
    enum Status: String, Codable, Sendable, CaseIterable, JSONSchemaDescribing { case loading, loaded, failed }
    /// The message while loading.
    static let loadingMessage = "Loading employees…"
    var status = Status.loading, message: String? = Self.loadingMessage, employees: [Employee] = [], count = 0
}

/// The employees page's action.
enum EmployeesAction: String, PageAction { case reload }

/// What happens on the employees page: a (re)load asked for, and its outcome.
enum EmployeesEvent { case reload, finished(Result<[Employee], any Error>) }

/// Declares `reload`; the state is bound whole.
struct EmployeesView: View {
    typealias Output = StateOutput<EmployeesState>
    func input(from actions: Actions<EmployeesAction>) -> Signal<Void> { actions.signal(.reload) }
}

/// Loads the list when the page opens and on each `reload` (a reload while loading replaces that load).
final class EmployeesViewModel: ViewModel {
    private let service: any EmployeeService, scheduler: Scheduler
    private let reducer = StateReducer<EmployeesState, EmployeesEvent>(EmployeesState())

    init(context: UnitContext) throws {
        (service, scheduler) = (try context.services.require((any EmployeeService).self), context.scheduler)
    }

    func transform(_ reload: Signal<Void>) -> StateOutput<EmployeesState> {
        reducer.run(reload.startWith(()).map { .reload }, on: scheduler) { [service] state, event in
            switch event {
            case .reload:
                (state.status, state.message) = (.loading, EmployeesState.loadingMessage)
                return .run("load", then: EmployeesEvent.finished) { try await service.employees() }
            case .finished(.success(let employees)):
                (state.status, state.message, state.employees, state.count) = (.loaded, nil, employees, employees.count)
            case .finished(.failure(let error)):
                (state.status, state.message) = (.failed, "Could not load employees: \(error)")
            }
            return .none
        }
    }
}

extension UnitCase {
    /// The employees page: `reload`.
    public static let employees = UnitCase("employees", view: EmployeesView.self, viewModel: EmployeesViewModel.self)
}
