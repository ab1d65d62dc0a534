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

    /// `Tests/Conformance/json-patch-tests/` in the package: the suite is kept in the repository, so a
    /// clean checkout anywhere runs it (its `SOURCE.md` says where it comes from).
    static func conformanceDirectory() -> URL? {
        packageRoot()?.appendingPathComponent("Tests/Conformance/json-patch-tests")
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
