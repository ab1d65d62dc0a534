import MVVMR

// Login → main (root, with a sent value) → editor (push, callback back) and about (present).

struct LoginInput { let login: Signal<String> }
struct LoginOutput { let route: Signal<Route> }

struct LoginView: View {
    func input(from actions: Actions<NamedAction>) -> LoginInput { LoginInput(login: actions.signal("login", of: String.self)) }
    func bind(_ output: LoginOutput, to page: Page) { page.route(output.route) }
}

final class LoginViewModel: ViewModel {
    init(context: UnitContext) {}
    func transform(_ input: LoginInput) -> LoginOutput {
        LoginOutput(route: input.login.map { name in Route.root(.main, sending: name) })
    }
}

struct MainInput {
    let edit: Signal<Void>
    let about: Signal<Void>
    let logout: Signal<Void>
    let counter: Signal<Void>
}

struct MainOutput {
    let user: Driver<String>
    let route: Signal<Route>
}

struct MainView: View {
    func input(from actions: Actions<NamedAction>) -> MainInput {
        MainInput(
            edit: actions.signal("edit"), about: actions.signal("about"), logout: actions.signal("logout"),
            counter: actions.signal("counter"))
    }
    func bind(_ output: MainOutput, to page: Page) {
        page.bind(output.user, at: "/user")
        page.route(output.route)
    }
}

final class MainViewModel: ViewModel {
    private let user: String
    private let callbacks: Signal<String>

    init(context: UnitContext) {
        user = context.sentValue(as: String.self) ?? "nobody"
        callbacks = context.callbacks(of: String.self)
    }

    func transform(_ input: MainInput) -> MainOutput {
        let user = callbacks.asDriver(startingWith: self.user)
        let route = Signal.merge(
            input.edit.withLatestFrom(user).map { Route.push(.editor, sending: $0) },
            input.about.map { Route.present(.about) },
            input.logout.map { Route.root(.login) },
            input.counter.map { Route.push(.counter) })
        return MainOutput(user: user, route: route)
    }
}

struct EditorInput {
    let save: Signal<String>
    let cancel: Signal<Void>
}
struct EditorOutput {
    let original: Driver<String>
    let route: Signal<Route>
}

struct EditorView: View {
    func input(from actions: Actions<NamedAction>) -> EditorInput {
        EditorInput(save: actions.signal("save", of: String.self), cancel: actions.signal("cancel"))
    }
    func bind(_ output: EditorOutput, to page: Page) {
        page.bind(output.original, at: "/original")
        page.route(output.route)
    }
}

final class EditorViewModel: ViewModel {
    private let original: String
    init(context: UnitContext) { original = context.sentValue(as: String.self) ?? "" }
    func transform(_ input: EditorInput) -> EditorOutput {
        EditorOutput(
            original: .just(original),
            route: Signal.merge(input.save.map { Route.back(returning: $0) }, input.cancel.map { Route.back }))
    }
}

struct AboutView: View {}
final class AboutViewModel: ViewModel {
    init(context: UnitContext) {}
}

extension UnitCase {
    static let login = UnitCase("login", view: LoginView.self, viewModel: LoginViewModel.self)
    static let main = UnitCase("main", view: MainView.self, viewModel: MainViewModel.self)
    static let editor = UnitCase("editor", view: EditorView.self, viewModel: EditorViewModel.self)
    static let about = UnitCase("about", view: AboutView.self, viewModel: AboutViewModel.self)
}
