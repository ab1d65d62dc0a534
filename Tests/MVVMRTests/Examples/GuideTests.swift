#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Testing

/// The guide shows its examples verbatim: every code block preceded by
/// `<!-- verbatim: path -->` must appear, line for line (indentation aside), in that file.
@Suite struct GuideTests {
    /// The package root, from this file's path: Tests/MVVMRTests/Examples/GuideTests.swift.
    static let root: String = {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4)
        return parts.joined(separator: "/")
    }()

    static func read(_ relativePath: String) -> String? {
        guard let file = fopen(root + "/" + relativePath, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func normalized(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { String($0.drop { $0 == " " }) }
            .filter { !$0.isEmpty }
    }

    @Test func guideShowsTheExamplesVerbatim() throws {
        let guide = try #require(Self.read("docs/GUIDE.md"))
        let lines = guide.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var checked = 0
        var index = 0
        while index < lines.count {
            let line = lines[index]
            index += 1
            guard line.hasPrefix("<!-- verbatim: "), line.hasSuffix(" -->") else { continue }
            let path = String(line.dropFirst("<!-- verbatim: ".count).dropLast(" -->".count))
            let source = try #require(Self.read(path), "\(path) is missing")
            guard index < lines.count, lines[index] == "```swift" else {
                Issue.record("no swift block after the verbatim marker for \(path)")
                continue
            }
            index += 1
            var block: [String] = []
            while index < lines.count, lines[index] != "```" {
                block.append(lines[index])
                index += 1
            }
            let expected = Self.normalized(block.joined(separator: "\n"))
            let actual = Self.normalized(source)
            let found = actual.indices.contains { start in
                start + expected.count <= actual.count && Array(actual[start..<start + expected.count]) == expected
            }
            #expect(found, "the guide's block for \(path) is not in that file")
            checked += 1
        }
        #expect(checked >= 4)
    }
}
