import JSONPatch
import MVVMR

// A shared board: a message posted in one session appears live in every other session that has the board open,
// whichever node serves it. Posts travel on the `board` topic; each one reaches every subscribed session as an
// input of its own (recorded, replayed on restore). A board shows what arrived while it was open, newest last,
// at most the last 50.
//
// View: {"author": "guest-3fa2", "draft": "", "messages": [{"id": 1, "author": "guest-3fa2", "text": "Hello"}],
//        "count": 1}

/// One post on the board, as it travels on the `board` topic.
public struct BoardPost: Codable, Sendable, Hashable {
    /// Who posted it (a board's `author`).
    public let author: String
    /// What was posted.
    public let text: String

    /// A post.
    /// - Parameters:
    ///   - author: who posts it.
    ///   - text: what is posted.
    public init(author: String, text: String) {
        self.author = author
        self.text = text
    }
}

extension Topic where Value == BoardPost {
    /// The board's posts, shared by every session on every node.
    public static var board: Topic<BoardPost> { Topic("board") }
}

/// One message as a board shows it: numbered by the board in the order it arrived.
struct BoardMessage: JSONRepresentable, Equatable, Codable, Sendable {
    /// Its number on this board (1 for the first that arrived): the list's identity.
    let id: Int
    /// Who posted it.
    let author: String
    /// What was posted.
    let text: String

    var jsonValue: JSONValue { ["id": .int(id), "author": .string(author), "text": .string(text)] }
}

/// The board's messages so far: the latest ``limit``, and how many arrived.
struct BoardMessages: Equatable, Codable, Sendable {
    /// The most messages a board shows.
    static let limit = 50

    private(set) var messages: [BoardMessage] = []
    private(set) var received = 0

    /// The messages with `post` added last (the oldest dropped past ``limit``).
    func adding(_ post: BoardPost) -> BoardMessages {
        var next = self
        next.received += 1
        next.messages.append(
            BoardMessage(id: next.received, author: post.author, text: String(post.text.prefix(BoardPage.maxLength))))
        if next.messages.count > Self.limit { next.messages.removeFirst(next.messages.count - Self.limit) }
        return next
    }
}

/// The draft being typed, and the post the last `post` made (nil when it made none).
struct BoardDraft {
    var text = ""
    var posted: BoardPost?
}

/// What reaches the draft: an edit, or a post.
enum BoardDraftEvent {
    case edit(String)
    case post
}

/// What a board is, written down for a session snapshot (the board is a ``RestorableViewModel``: a board open for
/// long receives many messages, and its session's log is compacted instead of growing with each one).
struct BoardState: Codable, Sendable, Equatable {
    /// The name the board posts as.
    let author: String
    /// The draft being typed.
    let draft: String
    /// The messages received.
    let messages: BoardMessages
}

/// The board's limits and helpers.
enum BoardPage {
    /// The most characters a draft (and a message shown) may have.
    static let maxLength = 500

    /// `text` without leading and trailing white space.
    static func trimmed(_ text: String) -> String {
        let start = text.drop(while: \.isWhitespace)
        var end = start.endIndex
        while end > start.startIndex, start[start.index(before: end)].isWhitespace { end = start.index(before: end) }
        return String(start[start.startIndex..<end])
    }
}

/// The board's events.
struct BoardInput {
    /// The draft field's new text (at most ``BoardPage/maxLength`` characters).
    let draft: Signal<String>
    /// The user posts the draft.
    let post: Signal<Void>
}

/// What the board shows, and what it publishes.
struct BoardOutput {
    /// The name this board posts as.
    let author: Driver<String>
    /// The draft being typed (cleared by a post).
    let draft: Driver<String>
    /// The latest messages, newest last.
    let messages: Driver<[BoardMessage]>
    /// How many messages are shown.
    let count: Driver<Int>
    /// The posts to publish on the board topic.
    let post: Signal<BoardPost>
}

/// Declares `draft` (a string of at most 500 characters) and `post`; writes `/author`, `/draft`, `/messages`
/// (diffed by `id`) and `/count`; publishes the posts on the `board` topic.
struct BoardView: View {
    func input(from actions: Actions<NamedAction>) -> BoardInput {
        BoardInput(
            draft: actions.signal("draft", of: String.self, maxLength: BoardPage.maxLength),
            post: actions.signal("post"))
    }

    func bind(_ output: BoardOutput, to page: Page) {
        page.bind(output.author, at: "/author")
        page.bind(output.draft, at: "/draft")
        page.bind(output.messages, at: "/messages")
        page.bind(output.count, at: "/count")
        page.publish(output.post, on: .board)
    }
}

/// Keeps the draft, posts it on the `board` topic, and lists what the topic brings (its own posts too).
final class BoardViewModel: RestorableViewModel {
    private let initial: BoardState
    private let posts: Signal<BoardPost>
    /// The latest draft and messages, as the scans left them.
    private let latestDraft: LatestState<String>
    private let latestMessages: LatestState<BoardMessages>

    init(context: UnitContext) {
        // From the page's seeded random source: the same name on every replay of the session.
        let bits = context.random.next()
        let digits = String(bits & 0xffff, radix: 16)
        let author = "guest-" + String(repeating: "0", count: 4 - digits.count) + digits
        initial = BoardState(author: author, draft: "", messages: BoardMessages())
        posts = context.messages(on: .board)
        latestDraft = LatestState("")
        latestMessages = LatestState(BoardMessages())
    }

    init(context: UnitContext, restoring savedState: BoardState) {
        initial = savedState
        posts = context.messages(on: .board)
        latestDraft = LatestState(savedState.draft)
        latestMessages = LatestState(savedState.messages)
    }

    /// Always at a quiet point: a board waits for nothing.
    var savedState: BoardState? {
        BoardState(author: initial.author, draft: latestDraft.value, messages: latestMessages.value)
    }

    func transform(_ input: BoardInput) -> BoardOutput {
        let author = initial.author
        let latestDraft = self.latestDraft
        let latestMessages = self.latestMessages
        let draft = Signal.merge(input.draft.map { BoardDraftEvent.edit($0) }, input.post.map { BoardDraftEvent.post })
            .scan(BoardDraft(text: initial.draft)) { state, event in
                switch event {
                case .edit(let text):
                    return BoardDraft(text: text, posted: nil)
                case .post:
                    let text = BoardPage.trimmed(state.text)
                    // An empty (or blank) draft posts nothing and stays as it is.
                    if text.isEmpty { return BoardDraft(text: state.text, posted: nil) }
                    return BoardDraft(text: "", posted: BoardPost(author: author, text: text))
                }
            }
        let messages = posts.scan(initial.messages) { messages, post in
            let next = messages.adding(post)
            latestMessages.value = next
            return next
        }
        .map(\.messages)
        .asDriver(startingWith: initial.messages.messages)
        let text = draft.map { state in
            latestDraft.value = state.text
            return state.text
        }
        return BoardOutput(
            author: .just(author),
            draft: text.asDriver(startingWith: initial.draft).distinctUntilChanged(),
            messages: messages,
            count: messages.map(\.count),
            post: draft.compactMap(\.posted))
    }
}

extension UnitCase {
    /// The shared board: `draft` (string, at most 500 characters), `post` (none).
    public static let board = UnitCase("board", view: BoardView.self, viewModel: BoardViewModel.self)
}

/// The latest state of a page's `scan` (only touched inside the session's serial context).
final class LatestState<State> {
    /// The state after the latest event.
    var value: State

    init(_ value: State) {
        self.value = value
    }
}
