import MVVMR

// The dashboard's quote part: one quote of the ViewModel's list; `shuffle` shows a random other one
// (never the same), with the randomness from the injected `RandomSource`.
//
// View (at /quote): {"text": "…", "author": "…", "index": 0}

/// What the quote part shows: the quote, who said it, and its position in the list.
struct DashboardQuoteState: Codable, Equatable, Sendable { var text: String, author: String, index: Int }

/// The quote part's action (`quote.shuffle` on the page).
enum DashboardQuoteAction: String, PageAction { case shuffle }

/// Declares `shuffle`; shows its state.
struct DashboardQuoteView: View {
    typealias Output = Driver<DashboardQuoteState>
    func input(from actions: Actions<DashboardQuoteAction>) -> Signal<Void> { actions.signal(.shuffle) }
}

/// Picks a random other quote on each shuffle and reports the shuffle to the page's activity.
final class DashboardQuoteViewModel: ViewModel {
    /// The quotes shown, in order of `index`: the words, and who said them.
    static let quotes: [(text: String, author: String)] = [
        ("Simplicity is prerequisite for reliability.", "Edsger W. Dijkstra"),
        ("Make it work, make it right, make it fast.", "Kent Beck"),
        ("Premature optimization is the root of all evil.", "Donald Knuth"),
        ("The best way to predict the future is to invent it.", "Alan Kay"),
        ("Programs must be written for people to read.", "Harold Abelson"),
        ("Talk is cheap. Show me the code.", "Linus Torvalds"),
        ("Deleted code is debugged code.", "Jeff Sickel"),
        ("Magic is just science that we don't understand yet.", "Arthur C. Clarke"),
    ]
    private let shuffles: Relay<Void>, random: any RandomSource

    init(context: UnitContext) throws {
        shuffles = try context.shared(DashboardActivity.self).shuffles
        // The page's seeded generator (the same draws on every replay), unless a test scripts the draws.
        random = context.services[(any RandomSource).self] ?? SeededRandomSource(context.random)
    }

    func transform(_ shuffle: Signal<Void>) -> Driver<DashboardQuoteState> {
        shuffle.scan(0) { [self] current, _ in
            shuffles.accept(())
            return Self.otherIndex(than: current, count: Self.quotes.count, random: random)
        }
        .asDriver(startingWith: 0)
        .map { DashboardQuoteState(text: Self.quotes[$0].text, author: Self.quotes[$0].author, index: $0) }
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
