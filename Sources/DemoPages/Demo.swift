import MVVMR

// The first page of the seed article: a button titled "Tap" in blue; `refresh` turns it into
// "Data refreshed" in orange.
//
// View: {"button": {"title": "Tap", "color": "blue"}}

/// The demo page's events.
struct DemoInput {
    /// The user taps the button.
    let refresh: Signal<Void>
}

/// What the demo page shows.
struct DemoOutput {
    /// The button's title.
    let title: Driver<String>
    /// The button's colour name.
    let color: Driver<String>
}

/// Declares `refresh` and writes `/button/title` and `/button/color`.
struct DemoView: View {
    func input(from actions: Actions<NamedAction>) -> DemoInput {
        DemoInput(refresh: actions.signal("refresh"))
    }

    func bind(_ output: DemoOutput, to page: Page) {
        page.bind(output.title, at: "/button/title")
        page.bind(output.color, at: "/button/color")
    }
}

/// Marks the data refreshed when the button is tapped.
final class DemoViewModel: ViewModel {
    init(context: UnitContext) {}

    func transform(_ input: DemoInput) -> DemoOutput {
        DemoOutput(
            title: input.refresh.map { "Data refreshed" }.asDriver(startingWith: "Tap"),
            color: input.refresh.map { "orange" }.asDriver(startingWith: "blue"))
    }
}

extension UnitCase {
    /// The demo page: `refresh`.
    public static let demo = UnitCase("demo", view: DemoView.self, viewModel: DemoViewModel.self)
}
