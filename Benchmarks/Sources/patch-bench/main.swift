// patch-bench: times JSONPatch.diff on a 10,000-row keyed list with one changed field, one
// inserted row and one moved row, and prints {"swift_diff_ms":…,"swift_patch_bytes":…,"ops":…}.
//
// Usage: patch-bench [--rows N] [--runs N] [--write-documents DIRECTORY]
// With --write-documents, old.json, new.json and swift-patch.json are written to DIRECTORY
// so Benchmarks/patch-bench.sh can compare with Python's jsonpatch on the same input.

import JSONPatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

struct BenchmarkOptions {
    var rows = 10_000
    var runs = 101
    var documentDirectory: String?

    init(arguments: [String]) {
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1] : nil
            switch arguments[index] {
            case "--rows": rows = value.flatMap { Int($0) } ?? rows
            case "--runs": runs = value.flatMap { Int($0) } ?? runs
            case "--write-documents": documentDirectory = value
            default:
                writeText("patch-bench: unknown argument \(arguments[index])\n", to: STDERR_FILENO)
                exit(2)
            }
            index += 2
        }
        rows = max(rows, 10)
        runs = max(runs, 1)
    }
}

func writeText(_ text: String, to descriptor: Int32) {
    var bytes = Array(text.utf8)
    writeBytes(&bytes, to: descriptor)
}

func writeBytes(_ bytes: inout [UInt8], to descriptor: Int32) {
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}

func writeFile(_ path: String, _ value: JSONValue) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard descriptor >= 0 else {
        writeText("patch-bench: cannot write \(path)\n", to: STDERR_FILENO)
        exit(1)
    }
    var bytes = value.jsonBytes
    writeBytes(&bytes, to: descriptor)
    close(descriptor)
}

func row(_ index: Int, title: String? = nil) -> JSONValue {
    [
        "id": .int(index),
        "title": .string(title ?? "Row \(index)"),
        "count": .int(index * 7 % 100),
        "done": .bool(index % 3 == 0),
        "tags": ["tag\(index % 5)", "group\(index % 7)"],
    ]
}

let options = BenchmarkOptions(arguments: Array(CommandLine.arguments.dropFirst()))
let oldRows = (0..<options.rows).map { row($0) }
var newRows = oldRows
newRows[options.rows / 8] = row(options.rows / 8, title: "Changed title")       // one field changed
newRows.insert(row(options.rows, title: "Inserted row"), at: options.rows / 2)  // one row inserted
let moved = newRows.remove(at: options.rows / 100)                              // one row moved
newRows.insert(moved, at: options.rows * 8 / 10)
let built: (old: JSONValue, new: JSONValue) = (
    ["title": "Benchmark list", "rows": .array(oldRows)],
    ["title": "Benchmark list", "rows": .array(newRows)]
)

/// The median of `runs` timings of `body`, in milliseconds.
func medianMilliseconds(runs: Int, _ body: () -> Void) -> Double {
    let clock = ContinuousClock()
    var samples: [Duration] = []
    samples.reserveCapacity(runs)
    for _ in 0..<runs {
        let start = clock.now
        body()
        samples.append(clock.now - start)
    }
    samples.sort()
    let median = samples[samples.count / 2]
    return Double(median.components.seconds) * 1000 + Double(median.components.attoseconds) / 1e15
}

// Both documents are re-parsed from text so that, like two independently rendered view-models
// (or Python loading two files), they share no storage: the diff has to compare every row.
let oldText = built.old.jsonBytes
let newText = built.new.jsonBytes
guard let old = try? JSONValue(parsing: oldText), let new = try? JSONValue(parsing: newText) else {
    writeText("patch-bench: generated documents do not parse\n", to: STDERR_FILENO)
    exit(1)
}
let parseMilliseconds = medianMilliseconds(runs: max(options.runs / 10, 3)) {
    _ = try? JSONValue(parsing: newText)
}
let encodeMilliseconds = medianMilliseconds(runs: max(options.runs / 10, 3)) {
    _ = new.jsonBytes
}

var patch = JSONPatch()
let milliseconds = medianMilliseconds(runs: options.runs) {
    patch = JSONPatch.diff(from: old, to: new)
}

// Two equal but separately parsed documents: the equality short-cuts must make this cheap.
guard let oldCopy = try? JSONValue(parsing: oldText) else { exit(1) }
var equalOperations = 0
let equalMilliseconds = medianMilliseconds(runs: options.runs) {
    equalOperations = JSONPatch.diff(from: old, to: oldCopy).count
}

guard equalOperations == 0, (try? patch.apply(to: old)) == new else {
    writeText("patch-bench: the diff does not turn the old document into the new one\n", to: STDERR_FILENO)
    exit(1)
}
let patchBytes = patch.json.jsonBytes.count
if let directory = options.documentDirectory {
    writeFile(directory + "/old.json", old)
    writeFile(directory + "/new.json", new)
    writeFile(directory + "/swift-patch.json", patch.json)
}
let report: JSONValue = [
    "swift_diff_ms": .double((milliseconds * 1000).rounded() / 1000),
    "swift_patch_bytes": .int(patchBytes),
    "ops": .int(patch.count),
    "rows": .int(options.rows),
    "document_bytes": .int(newText.count),
    "swift_equal_diff_ms": .double((equalMilliseconds * 1000).rounded() / 1000),
    "swift_parse_ms": .double((parseMilliseconds * 1000).rounded() / 1000),
    "swift_encode_ms": .double((encodeMilliseconds * 1000).rounded() / 1000),
    "runs": .int(options.runs),
]
writeText(report.jsonString + "\n", to: STDOUT_FILENO)
