import Foundation
import JSONPatch
import Testing

/// Runs the public json-patch-tests suite straight from its files.
@Suite("RFC 6902 conformance suite")
struct ConformanceTests {
    @Test(arguments: ["tests.json", "spec_tests.json"])
    func everyEnabledRecordPasses(fileName: String) throws {
        // A missing suite is a failure, never a skip: #require stops the test with an issue.
        let directory = try #require(TestPaths.conformanceDirectory(), "package root not found above \(#filePath)")
        let url = directory.appendingPathComponent(fileName)
        let data = try #require(FileManager.default.contents(atPath: url.path), "conformance file missing: \(url.path)")
        let records = try #require(try JSONValue(parsing: [UInt8](data)).arrayValue, "\(fileName) is not a JSON array")
        #expect(records.count > 10)
        var checked = 0
        for (number, record) in records.enumerated() {
            if record["disabled"]?.boolValue == true { continue }
            let label = "\(fileName) #\(number): \(record["comment"]?.stringValue ?? record["error"]?.stringValue ?? "")"
            let document = try #require(record["doc"], "\(label) has no doc")
            let patchJSON = try #require(record["patch"], "\(label) has no patch")
            let outcome = Result { () throws(JSONPatchError) -> JSONValue in
                try JSONPatch(json: patchJSON).apply(to: document)
            }
            if record["error"] != nil {
                if case .success(let value) = outcome {
                    Issue.record("\(label): expected an error, got \(value)")
                }
            } else if let expected = record["expected"] {
                switch outcome {
                case .success(let value): #expect(value == expected, "\(label)")
                case .failure(let error): Issue.record("\(label): unexpected error \(error)")
                }
            } else if case .failure(let error) = outcome {
                Issue.record("\(label): unexpected error \(error)")
            }
            checked += 1
        }
        #expect(checked == records.count - records.filter { $0["disabled"]?.boolValue == true }.count)
        #expect(checked > 10)
    }
}
