import Foundation
import Testing

/// The demo's pages stay small (issue 16): code lines of each page's source, blank lines and comments (`//`,
/// `///`) left out, within the budget the programming model promises. A page that grows past its budget fails
/// here, so a change to the API that costs pages lines shows at once.
@Suite struct PageSizeTests {
    /// The directory of the demo's pages, from this file's path.
    private static let pages: String = {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/") + "/Sources/DemoPages/"
    }()

    /// The code lines of `file`: not blank, not a comment.
    static func codeLines(of file: String) throws -> Int {
        let text = try String(contentsOfFile: pages + file, encoding: .utf8)
        return text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
            return !trimmed.isEmpty && !trimmed.hasPrefix("//")
        }.count
    }

    @Test(arguments: [
        (["Greeting.swift"], 20),
        (["Counters.swift"], 60),
        (["Login.swift"], 60),
        (["Dashboard.swift", "DashboardClock.swift", "DashboardQuote.swift", "DashboardStats.swift"], 110),
    ])
    func aPageFitsItsBudget(files: [String], budget: Int) throws {
        let lines = try files.reduce(0) { $0 + (try Self.codeLines(of: $1)) }
        #expect(lines <= budget, "\(files.joined(separator: " + ")): \(lines) code lines, budget \(budget)")
    }

    @Test func theCounterLinesCountCode() throws {
        // The count itself: a page of known shape.
        #expect(try Self.codeLines(of: "Greeting.swift") > 10)
        #expect(FileManager.default.fileExists(atPath: Self.pages + "Dashboard.swift"))
        // The dashboard's parts meet through what the page shares, not a global service.
        let dashboard = try String(contentsOfFile: Self.pages + "Dashboard.swift", encoding: .utf8)
        #expect(dashboard.contains("context.share("))
        #expect(!FileManager.default.fileExists(atPath: Self.pages + "Services/DashboardActivities.swift"))
    }
}
