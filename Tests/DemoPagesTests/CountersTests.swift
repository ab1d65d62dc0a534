@testable import DemoPages
import JSONPatch
import MVVMR
import MVVMRTesting
import Testing

@Suite struct CountersTests {
    static let firstPage: JSONValue = [
        "rows": counterRows(1...10), "page": 1, "pageSize": 10, "hasMore": true, "loading": false,
        "status": "Loaded page 1",
    ]

    @Test func opensWithTheFirstPage() throws {
        let tester = try PageTester(.counters, services: demoServices())
        #expect(tester.view == Self.firstPage)
        #expect(
            tester.actions == [
                ActionDescriptor(name: "increment", valueType: .int),
                ActionDescriptor(name: "loadMore", valueType: .none),
            ])
    }

    @Test func anIncrementIsOnePatchOperationOnThatRow() throws {
        let tester = try PageTester(.counters, services: demoServices())
        tester.send(CountersAction.increment, 3, patch: [.replace(path: try pointer("/rows/2/count"), value: 1)])
        tester.send(CountersAction.increment, 3, patch: [.replace(path: try pointer("/rows/2/count"), value: 2)])
        tester.send(CountersAction.increment, 10) { $0[at: "/rows/9/count"] = 1 }
    }

    @Test func anUnknownIdChangesNothing() throws {
        let tester = try PageTester(.counters, services: demoServices())
        tester.send(CountersAction.increment, 11)
        tester.send(CountersAction.increment, -1)
        #expect(tester.rev == 0)
    }

    @Test func loadMoreAppendsTheNextPage() async throws {
        let tester = try PageTester(.counters, services: demoServices())
        tester.send(CountersAction.loadMore) { view in
            view[at: "/loading"] = true
            view[at: "/status"] = "Loading page 2…"
        }
        await tester.runPendingWork { view in
            view[at: "/rows"] = counterRows(1...20)
            view[at: "/page"] = 2
            view[at: "/loading"] = false
            view[at: "/status"] = "Loaded page 2"
        }
        // Rows of the new page count like the others.
        tester.send(CountersAction.increment, 15, patch: [.replace(path: try pointer("/rows/14/count"), value: 1)])
    }

    @Test func theAppendedPageIsAddedRowByRow() async throws {
        let tester = try PageTester(.counters, services: demoServices())
        tester.send(CountersAction.loadMore) { view in
            view[at: "/loading"] = true
            view[at: "/status"] = "Loading page 2…"
        }
        let events = await tester.runPendingWork { view in
            view[at: "/rows"] = counterRows(1...20)
            view[at: "/page"] = 2
            view[at: "/loading"] = false
            view[at: "/status"] = "Loaded page 2"
        }
        let operations = events.flatMap { event -> [PatchOperation] in
            if case .patch(let patch) = event.kind { return patch.patch.operations }
            return []
        }
        // The ten new rows are added, the ten old ones untouched: no rewrite of the whole array.
        let rowOperations = operations.filter { $0.path.tokens.first == "rows" }
        #expect(rowOperations.count == 10)
        #expect(rowOperations.allSatisfy { if case .add = $0 { true } else { false } })
    }

    @Test func loadMoreWhileLoadingRequestsNothingMore() async throws {
        let pages = FlakyCounterPages(failingOnce: [])
        let tester = try PageTester(.counters, services: demoServices(counterPages: pages))
        tester.send(CountersAction.loadMore) { view in
            view[at: "/loading"] = true
            view[at: "/status"] = "Loading page 2…"
        }
        tester.send(CountersAction.loadMore)
        #expect(tester.session.pendingWorkCount == 1)
        await tester.runPendingWork { view in
            view[at: "/rows"] = counterRows(1...20)
            view[at: "/page"] = 2
            view[at: "/loading"] = false
            view[at: "/status"] = "Loaded page 2"
        }
        #expect(pages.requests == [2])
    }

    @Test func aFailedPageSaysSoAndLoadMoreRetriesIt() async throws {
        let pages = FlakyCounterPages(failingOnce: [3])
        let tester = try PageTester(.counters, services: demoServices(counterPages: pages))
        tester.send(CountersAction.loadMore) { view in
            view[at: "/loading"] = true
            view[at: "/status"] = "Loading page 2…"
        }
        await tester.runPendingWork { view in
            view[at: "/rows"] = counterRows(1...20)
            view[at: "/page"] = 2
            view[at: "/loading"] = false
            view[at: "/status"] = "Loaded page 2"
        }
        tester.send(CountersAction.loadMore) { view in
            view[at: "/loading"] = true
            view[at: "/status"] = "Loading page 3…"
        }
        await tester.runPendingWork { view in
            view[at: "/loading"] = false
            view[at: "/status"] = "Could not load page 3: the server is down"
        }
        tester.send(CountersAction.loadMore) { view in
            view[at: "/loading"] = true
            view[at: "/status"] = "Loading page 3…"
        }
        await tester.runPendingWork { view in
            view[at: "/rows"] = counterRows(1...30)
            view[at: "/page"] = 3
            view[at: "/loading"] = false
            view[at: "/status"] = "Loaded page 3"
        }
        #expect(pages.requests == [2, 3, 3])
    }

    @Test func afterTheFifthPageThereIsNoMore() async throws {
        let tester = try PageTester(.counters, services: demoServices())
        for number in 2...5 {
            tester.send(CountersAction.loadMore) { view in
                view[at: "/loading"] = true
                view[at: "/status"] = .string("Loading page \(number)…")
            }
            await tester.runPendingWork { view in
                view[at: "/rows"] = counterRows(1...(number * 10))
                view[at: "/page"] = .int(number)
                view[at: "/loading"] = false
                view[at: "/status"] = .string("Loaded page \(number)")
                if number == 5 { view[at: "/hasMore"] = false }
            }
        }
        tester.send(CountersAction.loadMore)
        #expect(tester.session.pendingWorkCount == 0)
    }

    @Test func incrementsKeepTheirCountsWhenAPageArrives() async throws {
        let tester = try PageTester(.counters, services: demoServices())
        tester.send(CountersAction.increment, 1) { $0[at: "/rows/0/count"] = 1 }
        tester.send(CountersAction.loadMore) { view in
            view[at: "/loading"] = true
            view[at: "/status"] = "Loading page 2…"
        }
        tester.send(CountersAction.increment, 2) { $0[at: "/rows/1/count"] = 1 }
        await tester.runPendingWork { view in
            var rows = counterRows(1...20).arrayValue ?? []
            rows[0] = ["id": 1, "title": "Row 1", "count": 1]
            rows[1] = ["id": 2, "title": "Row 2", "count": 1]
            view[at: "/rows"] = .array(rows)
            view[at: "/page"] = 2
            view[at: "/loading"] = false
            view[at: "/status"] = "Loaded page 2"
        }
    }

    @Test func theGeneratorNumbersRowsAcrossPages() async throws {
        let pages = GeneratedCounterPages(latency: .zero)
        #expect(
            pages.firstPage()
                == CounterPage(number: 1, rows: (1...10).map { CounterRow(id: $0, title: "Row \($0)") }, isLast: false))
        let last = try await pages.page(5)
        #expect(last.rows.map(\.id) == Array(41...50))
        #expect(last.isLast)
        await #expect(throws: CounterPageError.noSuchPage(6)) { try await pages.page(6) }
    }
}
