import MVVMR

// A shared board: a message posted in one session appears live in every other session that has the board open,
// whichever node serves it. Posts travel on the `board` topic; each one reaches every subscribed session as an
// input of its own (recorded, replayed on restore). A board shows what arrived while it was open, newest last,
// at most the last 50.
//
// View: {"author": "guest-3fa2", "draft": "", "messages": [{"id": 1, "author": "guest-3fa2", "text": "Hello"}],
//        "count": 1}

/// A message posted on the board: who wrote it, and the text.
public struct BoardPost: Codable, Sendable, Hashable {
    /// The author's name (`guest-` and four hex digits).
    public let author: String
    /// The text, trimmed, at most ``BoardState/maxLength`` characters.
    public let text: String

    /// A post.
    /// - Parameters:
    ///   - author: who wrote it.
    ///   - text: what they wrote.
    public init(author: String, text: String) {
        self.author = author
        self.text = text
    }
}

extension Topic where Value == BoardPost {
    /// The board's posts, shared by every session (and node).
    public static var board: Topic<BoardPost> { Topic("board") }
}

/// One message shown: its number on this board (1, 2, … in arrival order), its author and its text.
struct BoardMessage: Codable, Equatable, Sendable { var id: Int, author: String, text: String }

/// What the board shows: this session's author, the draft, and the last messages. It is also its saved state.
struct BoardState: Codable, Equatable, Sendable {
    /// The longest draft and message, in characters.
    static let maxLength = 500
    /// The most messages shown.
    static let limit = 50
    var author: String, draft = "", messages: [BoardMessage] = [], count = 0
}

/// The board's actions: `draft` (the text so far) and `post`.
enum BoardAction: String, PageAction { case draft, post }

/// What happens on the board: an edit, a post, or a message that arrived.
enum BoardEvent { case draft(String), post, received(BoardPost) }

/// Turns `draft` and `post` into events; the state is bound whole.
struct BoardView: View {
    typealias Output = StateOutput<BoardState>
    func input(from actions: Actions<BoardAction>) -> Signal<BoardEvent> {
        .merge(
            actions.signal(.draft, of: String.self, maxLength: BoardState.maxLength).map(BoardEvent.draft),
            actions.signal(.post).map { .post })
    }
}

/// Posts the draft on the `board` topic and shows what the topic brings. Restorable: its saved state is its state.
final class BoardViewModel: ReducerViewModel {
    let reducer: StateReducer<BoardState, BoardEvent>
    private let posts: Signal<BoardPost>, scheduler: Scheduler

    init(context: UnitContext, state: BoardState?) {
        if let state {
            reducer = StateReducer(state)
        } else {
            // From the page's seeded random source: the same name on every replay of the session.
            let digits = String(context.random.next() & 0xffff, radix: 16)
            reducer = StateReducer(BoardState(author: "guest-" + String(repeating: "0", count: 4 - digits.count) + digits))
        }
        (posts, scheduler) = (context.messages(on: .board), context.scheduler)
    }

    func transform(_ events: Signal<BoardEvent>) -> StateOutput<BoardState> {
        reducer.run(.merge(events, posts.map(BoardEvent.received)), on: scheduler) { state, event in
            switch event {
            case .draft(let text):
                state.draft = text
            case .post:
                // An empty (or blank) draft posts nothing and stays as it is.
                let text = state.draft.trimmed
                guard !text.isEmpty else { return .none }
                state.draft = ""
                return .publish(BoardPost(author: state.author, text: text), on: .board)
            case .received(let post):
                let text = String(post.text.prefix(BoardState.maxLength))
                state.messages.append(BoardMessage(id: (state.messages.last?.id ?? 0) + 1, author: post.author, text: text))
                state.messages.removeFirst(max(0, state.messages.count - BoardState.limit))
                state.count = state.messages.count
            }
            return .none
        }
    }
}

extension UnitCase {
    /// The shared board: `draft` (string, at most 500 characters), `post`.
    public static let board = UnitCase("board", view: BoardView.self, viewModel: BoardViewModel.self)
}
