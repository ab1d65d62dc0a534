import Foundation
import JSONPatch
import Testing

/// Locations of files the tests need, found from this source file.
enum TestPaths {
    /// The directory containing this package's `Package.swift`, found by walking up from this file.
    static func packageRoot(from file: String = #filePath) -> URL? {
        var directory = URL(fileURLWithPath: file).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                return directory
            }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// `../shared/conformance/json-patch-tests/` relative to the package root. When the package
    /// is checked out deeper than the repository layout expects (a work tree), the nearest
    /// ancestor's `shared/` is used instead; the first candidate is returned even if missing, so
    /// that the caller fails with the expected location.
    static func conformanceDirectory() -> URL? {
        guard let root = packageRoot() else { return nil }
        let suite = "shared/conformance/json-patch-tests"
        let expected = root.deletingLastPathComponent().appendingPathComponent(suite)
        var ancestor = root.deletingLastPathComponent()
        while ancestor.path != "/" {
            let candidate = ancestor.appendingPathComponent(suite)
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            ancestor = ancestor.deletingLastPathComponent()
        }
        return expected
    }
}

/// Builds a keyed list document like the benchmark's: `{"title": …, "rows": [{"id": i, …}]}`.
func makeRowsDocument(count: Int) -> JSONValue {
    var rows: [JSONValue] = []
    rows.reserveCapacity(count)
    for index in 0..<count {
        rows.append([
            "id": .int(index),
            "title": .string("Row \(index)"),
            "count": .int(index * 7 % 13),
            "tags": ["t\(index % 5)", "u\(index % 3)"],
        ])
    }
    return ["title": "Rows", "rows": .array(rows)]
}

/// Replaces `rows` in a document made by `makeRowsDocument`.
func withRows(_ document: JSONValue, _ transform: (inout [JSONValue]) -> Void) -> JSONValue {
    guard case .object(var object) = document, case .array(var rows)? = object["rows"] else { return document }
    transform(&rows)
    object["rows"] = .array(rows)
    return .object(object)
}
