import DemoPages
import Foundation
import JSONPatch
import MVVMRClient
import MVVMRServer
import Testing

// The complete example of docs/CLIENT.md, run against the demo's pages on a real in-process server
// (started like `TestServer` starts the test units). Not `@testable`: the example uses only the public API.
// The doc shows `guideExample(serverURL:)` exactly as it is written here; `theGuideShowsThisCode` checks it.

// guide-example:begin
/// Opens a session on the demo server, opens the counters page, increments its first row twice,
/// follows the event stream while the next rows load, and ends the session.
/// - Parameter serverURL: the demo server, e.g. `http://localhost:8080`.
/// - Returns: the first row's count, and how many rows the page held at the end.
func guideExample(serverURL: URL) async throws -> (count: Int, rows: Int) {
    let client = PageClient(baseURL: serverURL)

    // A new session starts at the server's root page: the demo's menu.
    let home = try await client.openSession()
    print("session \(client.sessionID ?? "?") at \(home.unit)")

    // The menu's `open` action (a string: a unit name) pushes the counters page.
    // The answer carries the new page's snapshot; the client holds it at once.
    let opened = try await client.send("open", value: "counters")
    print("navigation: \(opened.navigation.map { "\($0.kind)" } ?? "none"), stack \(client.navigation.stack)")

    // `increment` takes a row id (an int) and goes to the top page, now `counters`.
    try await client.send("increment", value: 1)
    try await client.send("increment", value: 1)
    let count = client.page("counters")?.view["rows"]?[0]?["count"]?.intValue ?? 0
    print("Row 1: \(count)")

    // Follow the event stream. `loadMore` answers at once ("Loading page 2…");
    // the next rows come later from an async service, as a patch event.
    let changes = client.changes()
    let watcher = Task {
        for await change in changes {
            if case .pageChanged(let unit) = change, let page = client.page(unit) {
                print("\(unit) rev \(page.rev): \(page.view["rows"]?.arrayValue?.count ?? 0) rows")
            }
        }
    }
    client.startEvents()
    try await client.send("loadMore")
    try await Task.sleep(nanoseconds: 2_000_000_000)
    watcher.cancel()
    let rows = client.page("counters")?.view["rows"]?.arrayValue?.count ?? 0

    // Ends the session on the server and stops the event stream.
    try await client.closeSession()
    return (count, rows)
}
// guide-example:end

/// The guide's example, run for real; and the guide's copy of it, compared with this file.
@Suite(.timeLimit(.minutes(1)))
struct ClientGuideExampleTests {
    /// The repository's root, from this file's path (Tests/ClientGuideTests/ClientGuideExampleTests.swift).
    static let repository: String = {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    @Test func theExampleRunsAgainstTheDemoServer() async throws {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.logLevel = .off
        configuration.publicDirectory = "/nonexistent"
        configuration.heartbeatSeconds = 1
        configuration.threads = 4
        configuration.shutdownGraceSeconds = 1
        let server = PageServer(
            units: DemoApp.units, root: DemoApp.root,
            services: DemoApp.services(dataDirectory: Self.repository + "/Data"), configuration: configuration)
        try server.start()
        defer { server.stop(gracePeriod: .milliseconds(300)) }
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)"))

        let result = try await guideExample(serverURL: url)
        #expect(result.count == 2)
        // Page 2 (200 ms in the demo's service) arrived over the event stream within the two seconds.
        #expect(result.rows == 20)
    }

    @Test func theGuideShowsThisCode() throws {
        let source = try String(contentsOfFile: String(#filePath), encoding: .utf8)
        let begin = try #require(source.range(of: "// guide-example:begin\n"))
        let end = try #require(source.range(of: "// guide-example:end\n"))
        let example = String(source[begin.upperBound..<end.lowerBound])
        let guide = try String(contentsOfFile: Self.repository + "/docs/CLIENT.md", encoding: .utf8)
        let shown = guide.contains(example)
        #expect(shown, "docs/CLIENT.md must show guideExample(serverURL:) exactly as this file has it")
    }
}
