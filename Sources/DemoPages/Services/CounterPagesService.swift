/// Pages of counter rows for the counters page: the first one at once, the next ones by async calls.
///
/// Register an implementation under the existential:
/// `services.register(GeneratedCounterPages() as any CounterPagesService, as: (any CounterPagesService).self)`.
public protocol CounterPagesService: Sendable {
    /// How many rows a page holds.
    var pageSize: Int { get }
    /// Page 1, available without waiting so the counters page opens with rows.
    func firstPage() -> CounterPage
    /// Page `number` (from 1).
    /// - Parameter number: the page wanted.
    /// - Throws: when the page cannot be loaded; the page shows the error's description.
    func page(_ number: Int) async throws -> CounterPage
}
