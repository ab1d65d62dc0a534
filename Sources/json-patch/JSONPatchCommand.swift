import JSONPatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The `json-patch` command: argument handling and the two sub-commands, separated from
/// process I/O so that every outcome is a value (output bytes, error text, exit status).
struct JSONPatchCommand {
    /// What the process should print and return.
    struct Outcome {
        /// Bytes for standard output.
        var output: [UInt8] = []
        /// Text for standard error.
        var errorText = ""
        /// The process exit status: 0 success, 1 failure (bad JSON, failing patch), 2 usage.
        var status: Int32 = 0
    }

    /// A failure reading an input file.
    struct ReadError: Error {
        var message: String
    }

    static let usage = """
        usage: json-patch diff OLD.json NEW.json [--identity-key KEY]
               json-patch apply DOCUMENT.json PATCH.json
        
        diff   prints an RFC 6902 JSON Patch that turns OLD into NEW
        apply  prints DOCUMENT with PATCH applied (atomically)
        A file name of '-' reads standard input (at most one argument may be '-').
        Exit status: 0 success, 1 invalid JSON or failing patch, 2 bad arguments.
        """

    /// Runs the command.
    ///
    /// - Parameters:
    ///   - arguments: The arguments after the program name.
    ///   - read: Reads a named input (`-` is standard input).
    static func run(_ arguments: [String], read: (String) throws(ReadError) -> [UInt8]) -> Outcome {
        var positional: [String] = []
        var identityKey = "id"
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--help" || argument == "-h" {
                return Outcome(output: Array((usage + "\n").utf8), status: 0)
            } else if argument == "--identity-key" {
                guard index + 1 < arguments.count else { return usageError("--identity-key needs a value") }
                identityKey = arguments[index + 1]
                index += 2
                continue
            } else if argument.hasPrefix("-") && argument != "-" {
                return usageError("unknown option '\(argument)'")
            }
            positional.append(argument)
            index += 1
        }
        guard let command = positional.first else { return usageError("missing command") }
        guard command == "diff" || command == "apply" else { return usageError("unknown command '\(command)'") }
        guard positional.count == 3 else { return usageError("'\(command)' takes exactly two file arguments") }
        if positional[1] == "-" && positional[2] == "-" {
            return usageError("only one input can be read from standard input")
        }
        let first: JSONValue
        let second: JSONValue
        do {
            first = try load(positional[1], read: read)
            second = try load(positional[2], read: read)
        } catch {
            return failure(error.message)
        }
        var output: [UInt8] = []
        if command == "diff" {
            var options = DiffOptions()
            options.identityKey = identityKey
            JSONPatch.diff(from: first, to: second, options: options).json.encode(into: &output)
        } else {
            let patch: JSONPatch
            do {
                patch = try JSONPatch(json: second)
            } catch {
                return failure("\(positional[2]): invalid patch: \(error)")
            }
            do {
                try patch.apply(to: first).encode(into: &output)
            } catch {
                return failure("patch failed: \(error)")
            }
        }
        output.append(UInt8(ascii: "\n"))
        return Outcome(output: output, status: 0)
    }

    private static func load(_ name: String, read: (String) throws(ReadError) -> [UInt8]) throws(ReadError) -> JSONValue {
        let bytes = try read(name)
        do {
            return try JSONValue(parsing: bytes)
        } catch {
            throw ReadError(message: "\(name == "-" ? "<stdin>" : name): invalid JSON: \(error)")
        }
    }

    private static func usageError(_ message: String) -> Outcome {
        Outcome(errorText: "json-patch: \(message)\n\(usage)\n", status: 2)
    }

    private static func failure(_ message: String) -> Outcome {
        Outcome(errorText: "json-patch: \(message)\n", status: 1)
    }

    /// Reads a whole file, or standard input for `-`.
    ///
    /// Uses file descriptors rather than `FILE *` streams: the C `stdin`/`stdout` globals are
    /// mutable shared state that strict concurrency checking rejects.
    static func readInput(_ name: String) throws(ReadError) -> [UInt8] {
        let descriptor = name == "-" ? STDIN_FILENO : open(name, O_RDONLY)
        guard descriptor >= 0 else {
            throw ReadError(message: "\(name): cannot open: \(String(cString: strerror(errno)))")
        }
        defer { if name != "-" { close(descriptor) } }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(message: "\(name): read error: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            result.append(contentsOf: chunk[0..<count])
        }
        return result
    }

    /// Writes all of `bytes` to a file descriptor, retrying short writes.
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
