// The todo page of the guide (docs/GUIDE.md, section 2), exactly as it is shown there.

import MVVMR

/// One row; rows are diffed by `id`, so toggling one is one patch operation.
struct Todo: Codable, Equatable, Identifiable, Sendable { var id: Int; var title: String; var done = false }

/// What the add form sends: `{"title": "Buy milk"}`.
struct NewTodo: Decodable { var title: String }

enum TodoFilter: String, Codable, CaseIterable, Sendable, JSONSchemaDescribing {
    case all, open, done
    func shows(_ todo: Todo) -> Bool { self == .all || todo.done == (self == .done) }
}

/// The page's view and its saved state: every todo, the filter, and the todos the filter shows.
struct TodoState: Codable, Equatable, Sendable {
    var todos: [Todo] = []
    var filter = TodoFilter.all
    var shown: [Todo] = []
}

enum TodoAction: String, PageAction { case add, toggle, filter }

enum TodoEvent { case add(NewTodo), toggle(Int), filter(TodoFilter) }

struct TodoView: View {
    typealias Output = StateOutput<TodoState>
    func input(from actions: Actions<TodoAction>) -> Signal<TodoEvent> {
        .merge(
            actions.signal(.add, of: NewTodo.self).map(TodoEvent.add),
            actions.signal(.toggle, of: Int.self).map(TodoEvent.toggle),
            actions.signal(.filter, of: TodoFilter.self).map(TodoEvent.filter))
    }
}

final class TodoViewModel: ReducerViewModel {
    let reducer: StateReducer<TodoState, TodoEvent>
    init(context: UnitContext, state: TodoState?) { reducer = StateReducer(state ?? TodoState()) }

    func transform(_ events: Signal<TodoEvent>) -> StateOutput<TodoState> {
        reducer.run(events) { state, event in
            switch event {
            case .add(let new):
                let title = new.title.trimmed
                if !title.isEmpty { state.todos.append(Todo(id: (state.todos.last?.id ?? 0) + 1, title: title)) }
            case .toggle(let id):
                if let index = state.todos.firstIndex(where: { $0.id == id }) { state.todos[index].done.toggle() }
            case .filter(let filter):
                state.filter = filter
            }
            state.shown = state.todos.filter(state.filter.shows)
        }
    }
}

extension UnitCase {
    public static let todo = UnitCase("todo", view: TodoView.self, viewModel: TodoViewModel.self)
}
