import Foundation
import Testing

/// Runs the real `json-patch` binary (built alongside the tests) as a process.
@Suite("json-patch command")
struct CommandLineTests {
    struct Run {
        var status: Int32
        var output: String
        var errorOutput: String
    }

    static func binary() throws -> URL {
        var candidates: [URL] = []
        // The test bundle lives in the build products directory, next to the executables.
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL)
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            candidates.append(executable.deletingLastPathComponent())
            candidates.append(executable.deletingLastPathComponent().deletingLastPathComponent())
        }
        candidates.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent())
        if let root = TestPaths.packageRoot() {
            candidates.append(root.appendingPathComponent(".build/debug"))
        }
        for directory in candidates {
            let url = directory.appendingPathComponent("json-patch")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        let searched = candidates.map(\.path).joined(separator: ", ")
        return try #require(nil as URL?, "json-patch binary not found in \(searched)")
    }

    static func run(_ arguments: [String], input: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = try binary()
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        let standardInput = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = standardInput
        try process.run()
        if let input {
            standardInput.fileHandleForWriting.write(Data(input.utf8))
        }
        try standardInput.fileHandleForWriting.close()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus,
            output: String(decoding: outputData, as: UTF8.self),
            errorOutput: String(decoding: errorData, as: UTF8.self)
        )
    }

    static func temporaryFile(_ contents: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("json-patch-test-\(UUID().uuidString).json")
        try Data(contents.utf8).write(to: url)
        return url.path
    }

    @Test func diffPrintsThePatch() throws {
        let old = try Self.temporaryFile(#"{"a":1,"rows":[{"id":1,"t":"x"},{"id":2,"t":"y"}]}"#)
        let new = try Self.temporaryFile(#"{"a":2,"rows":[{"id":2,"t":"y"},{"id":1,"t":"x"}]}"#)
        defer { try? FileManager.default.removeItem(atPath: old); try? FileManager.default.removeItem(atPath: new) }
        let run = try Self.run(["diff", old, new])
        #expect(run.status == 0)
        #expect(run.output == #"[{"op":"replace","path":"/a","value":2},{"op":"move","from":"/rows/0","path":"/rows/1"}]"# + "\n")
        #expect(run.errorOutput.isEmpty)
    }

    @Test func applyReadsThePatchFromStandardInput() throws {
        let document = try Self.temporaryFile(#"{"a":[1,2]}"#)
        defer { try? FileManager.default.removeItem(atPath: document) }
        let run = try Self.run(["apply", document, "-"], input: #"[{"op":"add","path":"/a/-","value":3}]"#)
        #expect(run.status == 0)
        #expect(run.output == #"{"a":[1,2,3]}"# + "\n")
    }

    @Test func failingPatchExitsOneWithAMessage() throws {
        let document = try Self.temporaryFile(#"{"a":1}"#)
        defer { try? FileManager.default.removeItem(atPath: document) }
        let run = try Self.run(["apply", document, "-"], input: #"[{"op":"test","path":"/a","value":2}]"#)
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(run.errorOutput.contains("test_failed"))
    }

    @Test func badJSONExitsOneWithTheOffset() throws {
        let document = try Self.temporaryFile(#"{"a":1}"#)
        defer { try? FileManager.default.removeItem(atPath: document) }
        let run = try Self.run(["diff", "-", document], input: #"{"a":]"#)
        #expect(run.status == 1)
        #expect(run.errorOutput.contains("at byte 5"))
        let missing = try Self.run(["diff", "/nonexistent/file.json", document])
        #expect(missing.status == 1)
        #expect(missing.errorOutput.contains("cannot open"))
    }

    @Test(arguments: [
        [String](), ["diff"], ["diff", "a.json"], ["merge", "a", "b"], ["diff", "a", "b", "c"], ["apply", "-", "-"], ["--bogus"],
    ])
    func badArgumentsExitTwoWithUsage(arguments: [String]) throws {
        let run = try Self.run(arguments)
        #expect(run.status == 2)
        #expect(run.errorOutput.contains("usage: json-patch"))
    }
}
