import MVVMR

// The login page: the form is validated as the user types; a valid form may be submitted, and the
// injected `AuthService` checks it (async; an edit meanwhile cancels the check). Success pushes
// `main`, sending the user name; a refusal shows an error until the next edit. The password never
// reaches the view.
//
// View: {"username": "", "canSubmit": false, "message": "Enter your username", "error": null}

/// The login form as typed so far, and what it lacks.
struct LoginForm: Sendable, Hashable {
    /// The shortest password the form accepts.
    static let minimumPasswordLength = 6

    /// The user name typed.
    let username: String
    /// The password typed.
    let password: String

    /// What the form still needs, or that it is ready.
    var message: String {
        if username.isEmpty { return "Enter your username" }
        if password.count < Self.minimumPasswordLength {
            return "The password needs at least \(Self.minimumPasswordLength) characters"
        }
        return "Ready to sign in"
    }

    /// Whether the form may be submitted: a user name and a long enough password.
    var canSubmit: Bool { !username.isEmpty && password.count >= Self.minimumPasswordLength }
}

/// The answer of the `AuthService` to one submit.
struct LoginAttempt: Sendable, Hashable, Codable {
    /// The user name submitted.
    let username: String
    /// Whether the credentials were accepted.
    let accepted: Bool
}

/// The login page's events.
struct LoginInput {
    /// The user name field's new text.
    let username: Signal<String>
    /// The password field's new text.
    let password: Signal<String>
    /// The user submits the form.
    let submit: Signal<Void>
}

/// What the login page shows, and where it navigates.
struct LoginOutput {
    /// The user name typed.
    let username: Driver<String>
    /// Whether the submit button is enabled.
    let canSubmit: Driver<Bool>
    /// What the form still needs.
    let message: Driver<String>
    /// The refusal of the last submit, until the next edit.
    let error: Driver<String?>
    /// The push of `main` after a successful sign-in.
    let route: Signal<Route>
}

/// Declares `username`, `password` (strings) and `submit`; writes `/username`, `/canSubmit`,
/// `/message` and `/error`.
struct LoginView: View {
    func input(from actions: Actions<NamedAction>) -> LoginInput {
        LoginInput(
            username: actions.signal("username", of: String.self),
            password: actions.signal("password", of: String.self),
            submit: actions.signal("submit"))
    }

    func bind(_ output: LoginOutput, to page: Page) {
        page.bind(output.username, at: "/username")
        page.bind(output.canSubmit, at: "/canSubmit")
        page.bind(output.message, at: "/message")
        page.bind(output.error, at: "/error")
        page.route(output.route)
    }
}

/// Validates the form, signs in through the `AuthService`, and pushes `main` on success.
final class LoginViewModel: ViewModel {
    /// The error shown after a refused submit.
    static let refusal = "Wrong username or password"

    private let auth: any AuthService
    private let scheduler: Scheduler

    init(context: UnitContext) throws {
        auth = try context.services.require((any AuthService).self)
        scheduler = context.scheduler
    }

    func transform(_ input: LoginInput) -> LoginOutput {
        let auth = self.auth
        let username = input.username.asDriver(startingWith: "")
        let form = Driver.combineLatest(username, input.password.asDriver(startingWith: ""))
            .map { LoginForm(username: $0.0, password: $0.1) }
        let scheduler = self.scheduler
        // A submit of a complete form starts a check; an edit cancels a check still running, so an
        // answer never applies to credentials the user has changed since.
        let checks = Signal.merge(
            input.submit.withLatestFrom(form).filter(\.canSubmit).map { Optional($0) },
            input.username.map { _ in LoginForm?.none },
            input.password.map { _ in LoginForm?.none })
        let attempts = checks.flatMapLatest { form -> Signal<LoginAttempt> in
            guard let form else { return .never }
            return scheduler.perform {
                LoginAttempt(
                    username: form.username,
                    accepted: await auth.signIn(username: form.username, password: form.password))
            }
        }
        let error = Signal.merge(
            attempts.filter { !$0.accepted }.map { _ in Optional(Self.refusal) },
            input.username.map { _ in String?.none },
            input.password.map { _ in String?.none })
        return LoginOutput(
            username: username,
            canSubmit: form.map(\.canSubmit),
            message: form.map(\.message),
            error: error.asDriver(startingWith: nil),
            route: attempts.filter(\.accepted).map { Route.push(.main, sending: $0.username) })
    }
}

extension UnitCase {
    /// The login page: `username`, `password` (strings), `submit`.
    public static let login = UnitCase("login", view: LoginView.self, viewModel: LoginViewModel.self)
}
