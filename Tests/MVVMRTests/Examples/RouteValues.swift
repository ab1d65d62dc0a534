import JSONPatch
import MVVMR

// Values crossing between pages as JSON: roster pushes profile with a `Member`; profile goes back
// with a `Member`, a value of another type, or one JSON cannot hold.

struct Member: Codable, Sendable, Equatable {
    var name: String
    var age: Int
    var nickname: String?
}

/// Holds a number JSON cannot hold when `score` is infinite or NaN.
struct Reading: Codable, Sendable {
    var score: Double
}

struct RosterInput {
    let open: Signal<String>
    let openWithInfinity: Signal<Void>
}

struct RosterOutput {
    let last: Driver<String>
    let route: Signal<Route>
}

struct RosterView: View {
    func input(from actions: Actions<NamedAction>) -> RosterInput {
        RosterInput(open: actions.signal("open", of: String.self), openWithInfinity: actions.signal("openWithInfinity"))
    }
    func bind(_ output: RosterOutput, to page: Page) {
        page.bind(output.last, at: "/last")
        page.route(output.route)
    }
}

final class RosterViewModel: ViewModel {
    private let returned: Signal<Member>
    init(context: UnitContext) { returned = context.callbacks(of: Member.self) }
    func transform(_ input: RosterInput) -> RosterOutput {
        RosterOutput(
            last: returned.map { "\($0.name) \($0.age)" }.asDriver(startingWith: "none"),
            route: Signal.merge(
                input.open.map { Route.push(.profile, sending: Member(name: $0, age: 36)) },
                input.openWithInfinity.map { Route.push(.profile, sending: Reading(score: 1 / 0.0)) }))
    }
}

struct ProfileInput {
    let done: Signal<Void>
    let doneWithText: Signal<Void>
    let doneWithNaN: Signal<Void>
}

struct ProfileOutput {
    let name: Driver<String>
    let age: Driver<Int>
    let route: Signal<Route>
}

struct ProfileView: View {
    func input(from actions: Actions<NamedAction>) -> ProfileInput {
        ProfileInput(
            done: actions.signal("done"), doneWithText: actions.signal("doneWithText"),
            doneWithNaN: actions.signal("doneWithNaN"))
    }
    func bind(_ output: ProfileOutput, to page: Page) {
        page.bind(output.name, at: "/name")
        page.bind(output.age, at: "/age")
        page.route(output.route)
    }
}

final class ProfileViewModel: ViewModel {
    private let member: Member
    init(context: UnitContext) { member = context.sentValue(as: Member.self) ?? Member(name: "nobody", age: 0) }
    func transform(_ input: ProfileInput) -> ProfileOutput {
        let older = Member(name: member.name, age: member.age + 1)
        return ProfileOutput(
            name: .just(member.name),
            age: .just(member.age),
            route: Signal.merge(
                input.done.map { Route.back(returning: older) },
                input.doneWithText.map { Route.back(returning: "not a member") },
                input.doneWithNaN.map { Route.back(returning: Reading(score: .nan)) }))
    }
}

extension UnitCase {
    static let roster = UnitCase("roster", view: RosterView.self, viewModel: RosterViewModel.self)
    static let profile = UnitCase("profile", view: ProfileView.self, viewModel: ProfileViewModel.self)
}
