#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Entry point: all behaviour lives in JSONPatchCommand; this only does process I/O.
let outcome = JSONPatchCommand.run(Array(CommandLine.arguments.dropFirst()), read: JSONPatchCommand.readInput)
JSONPatchCommand.writeAll(outcome.output, to: STDOUT_FILENO)
JSONPatchCommand.writeAll(Array(outcome.errorText.utf8), to: STDERR_FILENO)
exit(outcome.status)
