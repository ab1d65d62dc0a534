import MVVMR

// The dashboard's quote part: one quote of the ViewModel's list; `shuffle` shows a random other one
// (never the same), with the randomness from the injected `RandomSource`.
//
// View (at /quote): {"text": "…", "author": "…", "index": 0}

/// A quote and who said it.
struct Quote: Hashable {
    /// The words.
    let text: String
    /// Who said them.
    let author: String
}

/// The quote part's events.
struct DashboardQuoteInput {
    /// The user asks for another quote.
    let shuffle: Signal<Void>
}

/// What the quote part shows.
struct DashboardQuoteOutput {
    /// The position of the quote in the list.
    let index: Driver<Int>
    /// The quote.
    let quote: Driver<Quote>
}

/// Declares `shuffle` (`quote.shuffle` on the page); writes `/text`, `/author` and `/index`.
struct DashboardQuoteView: View {
    func input(from actions: Actions<NamedAction>) -> DashboardQuoteInput {
        DashboardQuoteInput(shuffle: actions.signal("shuffle"))
    }

    func bind(_ output: DashboardQuoteOutput, to page: Page) {
        page.bind(output.quote.map(\.text), at: "/text")
        page.bind(output.quote.map(\.author), at: "/author")
        page.bind(output.index, at: "/index")
    }
}

/// Picks a random other quote on each shuffle and reports the shuffle to the page's activity.
final class DashboardQuoteViewModel: ViewModel {
    /// The quotes shown, in order of `index`.
    static let quotes: [Quote] = [
        Quote(text: "Simplicity is prerequisite for reliability.", author: "Edsger W. Dijkstra"),
        Quote(text: "Make it work, make it right, make it fast.", author: "Kent Beck"),
        Quote(text: "Premature optimization is the root of all evil.", author: "Donald Knuth"),
        Quote(text: "The best way to predict the future is to invent it.", author: "Alan Kay"),
        Quote(text: "Programs must be written for people to read.", author: "Harold Abelson"),
        Quote(text: "Talk is cheap. Show me the code.", author: "Linus Torvalds"),
        Quote(text: "Deleted code is debugged code.", author: "Jeff Sickel"),
        Quote(text: "Magic is just science that we don't understand yet.", author: "Arthur C. Clarke"),
    ]

    private let activity: DashboardActivity
    private let random: any RandomSource

    init(context: UnitContext) throws {
        activity = try context.services.require(DashboardActivities.self).current(for: context.scheduler)
        // The page's seeded generator (the same draws on every replay), unless a test scripts the draws.
        random = context.services[(any RandomSource).self] ?? SeededRandomSource(context.random)
    }

    func transform(_ input: DashboardQuoteInput) -> DashboardQuoteOutput {
        let random = self.random
        let shuffles = activity.shuffles
        let index = input.shuffle
            .scan(0) { current, _ in Self.otherIndex(than: current, count: Self.quotes.count, random: random) }
            .map { index in
                shuffles.accept(())
                return index
            }
            .asDriver(startingWith: 0)
        return DashboardQuoteOutput(index: index, quote: index.map { Self.quotes[$0] })
    }

    /// A random index in `0..<count` other than `current` (`current` itself when it is the only one).
    /// - Parameters:
    ///   - current: the index shown now.
    ///   - count: how many quotes there are.
    ///   - random: where the randomness comes from.
    static func otherIndex(than current: Int, count: Int, random: any RandomSource) -> Int {
        guard count > 1 else { return current }
        // Pick among the count - 1 others: skip over the current one.
        let pick = min(max(random.index(below: count - 1), 0), count - 2)
        return pick >= current ? pick + 1 : pick
    }
}

extension UnitCase {
    /// The dashboard's quote part: `shuffle`.
    public static let dashboardQuote = UnitCase(
        "dashboardQuote", view: DashboardQuoteView.self, viewModel: DashboardQuoteViewModel.self)
}
