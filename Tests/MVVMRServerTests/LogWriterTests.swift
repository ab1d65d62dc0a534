import Foundation
import JSONPatch
import Locking
import Testing

@testable import MVVMRServer

/// The request log's writer: lines from many threads whole and in order, one thread's writes in batches, a reader
/// that stops never blocking a logging thread (its lines are dropped, counted, and reported), and a flush that
/// waits for what was logged before it. Each test writes to a pipe of its own.
@Suite struct LogWriterTests {
    /// A pipe whose read end a test drains (or not).
    final class Pipe: @unchecked Sendable {
        let readEnd: Int32
        let writeEnd: Int32

        init() throws {
            var ends: [Int32] = [0, 0]
            try #require(pipe(&ends) == 0)
            readEnd = ends[0]
            writeEnd = ends[1]
        }

        /// Everything readable now, waiting up to `timeout` for the first bytes.
        func readAvailable(timeout: Duration = .milliseconds(200)) -> [UInt8] {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var descriptor = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            var waitMilliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
            while poll(&descriptor, 1, waitMilliseconds) > 0 {
                let count = read(readEnd, &buffer, buffer.count)
                if count <= 0 { break }
                bytes += buffer[0..<count]
                waitMilliseconds = 20
            }
            return bytes
        }

        deinit {
            close(readEnd)
            close(writeEnd)
        }
    }

    /// Runs `body` on a thread of its own: these tests block on pipes, which on the shared pool of tasks would
    /// hold up other suites' timers and tasks.
    private static func onThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            if case .failure = Threads.start({ continuation.resume(returning: body()) }) {
                continuation.resume(returning: body())
            }
        }
    }

    private static func lines(_ bytes: [UInt8]) -> [JSONValue] {
        bytes.split(separator: 10).compactMap { try? JSONValue(parsing: Array($0)) }
    }

    @Test func linesFromManyThreadsArriveWholeAndEachThreadsInOrder() async throws {
        let pipe = try Pipe()
        let writer = LogWriter(descriptor: pipe.writeEnd)
        let logger = Logger(level: .info) { writer.append($0) }
        async let read = Self.onThread { () -> [UInt8] in
            var all: [UInt8] = []
            while true {
                let bytes = pipe.readAvailable(timeout: .seconds(2))
                if bytes.isEmpty { return all }
                all += bytes
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    await Self.onThread {
                        for number in 0..<500 { logger.log(.info, "request", [("thread", .int(thread)), ("n", .int(number))]) }
                    }
                }
            }
        }
        _ = await Self.onThread { writer.flush() }
        let lines = Self.lines(await read)
        #expect(lines.count == 2_000)
        for thread in 0..<4 {
            let numbers = lines.filter { $0["thread"]?.intValue == thread }.compactMap { $0["n"]?.intValue }
            #expect(numbers == Array(0..<500), "thread \(thread)")
        }
        #expect(writer.droppedLineCount == 0)
    }

    @Test func aReaderThatStopsNeverBlocksALoggerAndTheDroppedLinesAreReported() async throws {
        let pipe = try Pipe()
        // A small buffer, and a pipe nobody reads: it fills (64 KiB), then the buffer does.
        let writer = LogWriter(descriptor: pipe.writeEnd, byteLimit: 16_384)
        let logger = Logger(level: .info) { writer.append($0) }
        let started = ContinuousClock.now
        for number in 0..<20_000 { logger.log(.info, "request", [("n", .int(number))]) }
        #expect(ContinuousClock.now - started < .seconds(5), "logging waited for the pipe")
        #expect(writer.droppedLineCount > 0)
        let dropped = writer.droppedLineCount
        // The reader comes back: what was taken is written, then the report of what was not.
        let bytes = await Self.onThread { () -> [UInt8] in
            var bytes: [UInt8] = []
            for _ in 0..<50 {
                bytes += pipe.readAvailable()
                if Self.lines(bytes).contains(where: { $0["message"] == "log_lines_dropped" }) { break }
            }
            return bytes
        }
        let lines = Self.lines(bytes)
        let reports = lines.filter { $0["message"] == "log_lines_dropped" }
        #expect(reports.compactMap { $0["count"]?.intValue }.reduce(0, +) == dropped)
        #expect(reports.allSatisfy { $0["level"] == "warning" })
        let written = lines.filter { $0["message"] == "request" }.compactMap { $0["n"]?.intValue }
        #expect(written.count + dropped == 20_000)
        #expect(written == written.sorted(), "the lines taken keep their order")
    }

    @Test func aFlushReturnsOnceEverythingBeforeItIsWritten() async throws {
        let pipe = try Pipe()
        let writer = LogWriter(descriptor: pipe.writeEnd)
        writer.flush()  // nothing logged yet: at once
        for number in 0..<100 { writer.append(Logger.line(.info, "line", [("n", .int(number))])) }
        _ = await Self.onThread { writer.flush() }
        // Everything is in the pipe already: one read without waiting has it all.
        let lines = Self.lines(pipe.readAvailable(timeout: .zero))
        #expect(lines.compactMap { $0["n"]?.intValue } == Array(0..<100))
    }

    @Test func aFlushGivesUpAfterItsTimeoutWhenNobodyReads() async throws {
        let pipe = try Pipe()
        let writer = LogWriter(descriptor: pipe.writeEnd)
        let line = Logger.line(.info, "request", [("padding", .string(String(repeating: "p", count: 1_000)))])
        for _ in 0..<200 { writer.append(line) }  // 200 KiB: more than the pipe takes
        // Timed on its thread: getting back onto the pool of tasks can take seconds when other suites fill it.
        let (flushed, took) = await Self.onThread { () -> (Bool, Duration) in
            let started = ContinuousClock.now
            let flushed = writer.flush(timeout: .milliseconds(500))
            return (flushed, ContinuousClock.now - started)
        }
        #expect(!flushed)
        #expect(took < .seconds(3), "\(took)")
        // Drained, the writer goes on: everything gets out.
        var bytes: [UInt8] = []
        let drained = await Self.onThread { () -> [UInt8] in
            var all: [UInt8] = []
            while true {
                let chunk = pipe.readAvailable(timeout: .milliseconds(500))
                if chunk.isEmpty { return all }
                all += chunk
            }
        }
        bytes = drained
        #expect(Self.lines(bytes).count == 200)
    }

    @Test func aLineIsTheSameJSONAsBeforeEncodedStraightToBytes() throws {
        let line = Logger.line(.warning, "store \"down\"", [("status", .int(503)), ("path", .string("/a\nb")), ("ok", .bool(false))])
        #expect(line.last == 10)
        let object = try JSONValue(parsing: Array(line.dropLast()))
        #expect(object["level"] == "warning")
        #expect(object["message"] == "store \"down\"")
        #expect(object["status"] == 503 && object["path"] == "/a\nb" && object["ok"] == false)
        let time = try #require(object["time"]?.stringValue)
        #expect(time.count == 24 && time.hasSuffix("Z") && time.dropFirst(10).first == "T", "\(time)")
        #expect(object.objectValue?.keys == ["time", "level", "message", "status", "path", "ok"])
    }

    @Test func theDroppedLinesAreACounterInTheMetrics() {
        let server = PageServer(units: [.shout], root: .shout)
        let text = server.metrics.render()
        #expect(text.contains("# TYPE mvvmr_log_lines_dropped_total counter\nmvvmr_log_lines_dropped_total "))
    }
}
