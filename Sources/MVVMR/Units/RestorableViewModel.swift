/// A ViewModel whose state can be written down as a value, so that its page's log can be compacted: the
/// session keeps the saved state in a snapshot instead of the records that led to it, and a restore binds
/// the page from the saved state (``init(context:restoring:)``) instead of replaying them.
///
/// Opting in is optional: a page whose ViewModel does not conform is restored by replaying its records as
/// before. What it buys: a long-lived session's log stays short (its store holds a snapshot and the records
/// since), restoring it is quick, and its page is never bound fresh for passing `MAX_PAGE_RECORDS`.
///
/// The contract: a ViewModel made with `init(context:restoring: savedState)` and transformed must show the
/// same view its saved self showed (the session checks the view's digest; a page that comes out different
/// is bound fresh, like a page whose code changed) and behave the same from then on. Return nil from
/// ``savedState`` while the page is not at a quiet point (an async job in flight, a debounce pending): the
/// session then tries again later.
///
/// ```swift
/// final class TallyViewModel: RestorableViewModel {
///     private var count: Int
///     init(context: UnitContext) { count = 0 }
///     init(context: UnitContext, restoring count: Int) { self.count = count }
///     var savedState: Int? { count }
///     func transform(_ input: TallyInput) -> TallyOutput {
///         let counts = input.increment.scan(count) { [weak self] count, _ in
///             self?.count = count + 1
///             return count + 1
///         }
///         return TallyOutput(count: counts.asDriver(startingWith: count))
///     }
/// }
/// ```
public protocol RestorableViewModel: ViewModel {
    /// What the ViewModel needs to be made again as it is now; encoded as JSON in the session's snapshot.
    associatedtype SavedState: Codable & Sendable

    /// The ViewModel's state now, or nil when it is not at a quiet point (then no snapshot is taken).
    var savedState: SavedState? { get }

    /// Makes the ViewModel for a page restored from a snapshot, from the state it had.
    /// - Parameters:
    ///   - context: services, route parameters, the value sent by the router, the scheduler (as when the
    ///     page was first bound; its `random` goes on where the saved page's was).
    ///   - savedState: what ``savedState`` returned when the snapshot was taken.
    init(context: UnitContext, restoring savedState: SavedState) throws
}
