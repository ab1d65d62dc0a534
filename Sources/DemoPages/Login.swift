import MVVMR

// The login page: the form is validated as the user types; a valid form may be submitted, and the
// injected `AuthService` checks it (async; an edit meanwhile cancels the check). Success pushes
// `main`, sending the user name; a refusal shows an error until the next edit. The password never
// reaches the view.
//
// View: {"username": "", "canSubmit": false, "message": "Enter your username", "error": null}

/// The login form: what the view shows, and the password, which it never shows.
struct LoginState: Codable, Equatable, Sendable {
    /// The shortest password the form accepts.
    static let minimumPasswordLength = 6
    var username = "", canSubmit = false, message = "Enter your username", error: String?
    var password = ""
    /// The view's members: not the password.
    private enum CodingKeys: String, CodingKey { case username, canSubmit, message, error }

    /// The form after an edit: what it lacks, whether it may be submitted, and no error.
    mutating func edit(username: String? = nil, password: String? = nil) {
        (self.username, self.password, error) = (username ?? self.username, password ?? self.password, nil)
        canSubmit = !self.username.isEmpty && self.password.count >= Self.minimumPasswordLength
        message =
            self.username.isEmpty ? "Enter your username"
            : canSubmit ? "Ready to sign in" : "The password needs at least \(Self.minimumPasswordLength) characters"
    }
}

/// The answer of the `AuthService` to one submit.
struct LoginAttempt: Sendable, Hashable, Codable { let username: String, accepted: Bool }

/// The login page's actions: `username`, `password` (strings) and `submit`.
enum LoginAction: String, PageAction { case username, password, submit }

/// What happens on the login page.
enum LoginEvent: Codable, Sendable { case username(String), password(String), submit, answered(LoginAttempt) }

/// Turns the form's actions into events; the form is bound whole.
struct LoginView: View {
    typealias Output = StateOutput<LoginState>
    func input(from actions: Actions<LoginAction>) -> Signal<LoginEvent> {
        .merge(
            actions.signal(.username, of: String.self).map(LoginEvent.username),
            actions.signal(.password, of: String.self).map(LoginEvent.password), actions.signal(.submit).map { .submit })
    }
}

/// Validates the form, signs in through the `AuthService`, and pushes `main` on success. Not restorable: its
/// state holds the password.
final class LoginViewModel: ViewModel {
    /// The error shown after a refused submit.
    static let refusal = "Wrong username or password"
    private let auth: any AuthService, scheduler: Scheduler
    private let reducer = StateReducer<LoginState, LoginEvent>(LoginState())

    init(context: UnitContext) throws {
        auth = try context.services.require((any AuthService).self)
        scheduler = context.scheduler
    }

    func transform(_ events: Signal<LoginEvent>) -> StateOutput<LoginState> {
        reducer.run(events, on: scheduler) { [auth] state, event in
            switch event {
            case .username(let username):
                state.edit(username: username)
                return .cancel("signIn")
            case .password(let password):
                state.edit(password: password)
                return .cancel("signIn")
            case .submit:
                guard state.canSubmit else { return .none }
                let (username, password) = (state.username, state.password)
                return .run("signIn", then: LoginEvent.answered) {
                    LoginAttempt(username: username, accepted: await auth.signIn(username: username, password: password))
                }
            case .answered(let attempt) where attempt.accepted:
                return .route(.push(.main, sending: attempt.username))
            case .answered:
                state.error = Self.refusal
                return .none
            }
        }
    }
}

extension UnitCase {
    /// The login page: `username`, `password` (strings), `submit`.
    public static let login = UnitCase("login", view: LoginView.self, viewModel: LoginViewModel.self)
}
