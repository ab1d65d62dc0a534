/// Counter rows made up on demand: page `n` holds rows `(n-1)·pageSize+1 … n·pageSize`, titled
/// "Row 7", counts at zero; `pageCount` pages in all; each async page arrives after `latency`.
public struct GeneratedCounterPages: CounterPagesService {
    /// How many rows a page holds.
    public let pageSize: Int
    /// How many pages exist.
    public let pageCount: Int
    /// How long each async page takes, to simulate a network call.
    public let latency: Duration

    /// A generator.
    /// - Parameters:
    ///   - pageSize: rows per page.
    ///   - pageCount: how many pages exist.
    ///   - latency: the simulated latency of `page(_:)`; zero answers at once.
    public init(pageSize: Int = 10, pageCount: Int = 5, latency: Duration = .milliseconds(200)) {
        self.pageSize = pageSize
        self.pageCount = pageCount
        self.latency = latency
    }

    /// Page 1, at once.
    public func firstPage() -> CounterPage { makePage(1) }

    /// Page `number`, after `latency`.
    /// - Parameter number: from 1 to `pageCount`.
    /// - Throws: `CounterPageError.noSuchPage` outside that range.
    public func page(_ number: Int) async throws -> CounterPage {
        if latency > .zero { try await Task.sleep(for: latency) }
        guard number >= 1, number <= pageCount else { throw CounterPageError.noSuchPage(number) }
        return makePage(number)
    }

    private func makePage(_ number: Int) -> CounterPage {
        let first = (number - 1) * pageSize + 1
        let rows = (first..<first + pageSize).map { CounterRow(id: $0, title: "Row \($0)") }
        return CounterPage(number: number, rows: rows, isLast: number >= pageCount)
    }
}
