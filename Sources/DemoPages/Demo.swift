import MVVMR

// The first page of the seed article: a button titled "Tap" in blue; `refresh` turns it into
// "Data refreshed" in orange.
//
// View: {"button": {"title": "Tap", "color": "blue"}}

/// The demo's button: its title and colour.
struct DemoButton: Codable, Equatable, Sendable { var title = "Tap", color = "blue" }

/// What the demo page shows: the button.
struct DemoState: Codable, Equatable, Sendable { var button = DemoButton() }

/// The demo page's action.
enum DemoAction: String, PageAction { case refresh }

/// Declares `refresh`; the state is bound whole.
struct DemoView: View {
    typealias Output = StateOutput<DemoState>
    func input(from actions: Actions<DemoAction>) -> Signal<Void> { actions.signal(.refresh) }
}

/// Turns the button orange with "Data refreshed" on `refresh`.
final class DemoViewModel: ViewModel {
    private let reducer = StateReducer<DemoState, Void>(DemoState())
    init(context: UnitContext) {}

    func transform(_ refresh: Signal<Void>) -> StateOutput<DemoState> {
        reducer.run(refresh) { state, _ in state.button = DemoButton(title: "Data refreshed", color: "orange") }
    }
}

extension UnitCase {
    /// The seed article's first page: `refresh`.
    public static let demo = UnitCase("demo", view: DemoView.self, viewModel: DemoViewModel.self)
}
