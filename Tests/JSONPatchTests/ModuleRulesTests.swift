import Foundation
import Testing

/// Guards the module's dependency rule: the library must build on the standard library alone.
@Suite("Module rules")
struct ModuleRulesTests {
    @Test func libraryDoesNotImportFoundation() throws {
        let root = try #require(TestPaths.packageRoot(), "package root not found")
        let sources = root.appendingPathComponent("Sources/JSONPatch")
        let files = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 5)
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") where line.trimmingCharacters(in: .whitespaces).hasPrefix("import ") {
                #expect(line.contains("FoundationEssentials") || !line.contains("Foundation"), "\(file): \(line)")
            }
        }
    }
}
