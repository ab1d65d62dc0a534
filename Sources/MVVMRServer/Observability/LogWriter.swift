import Locking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Log lines on their way to a file descriptor (standard output): a request thread appends its line to a bounded
/// buffer and goes on; one thread of the writer's own writes what has gathered with one `write(2)` per batch. A
/// request thread never waits for the descriptor: when the buffer is full (the reader of standard output stopped,
/// or cannot keep up) the line is dropped and counted, and the writer reports the count in a line of its own once
/// it can write again.
///
/// ``flush()`` waits until everything appended before it is written: a server stopping calls it, so a SIGTERM
/// loses no line. A SIGKILL loses what was not written yet (at most a few milliseconds of lines).
final class LogWriter: Sendable {
    private struct State {
        /// Lines waiting, back to back, each with its newline.
        var pending: [UInt8] = []
        /// Bytes appended and bytes written (or given up on) since the start: a flush waits for the second to reach
        /// what the first was when it began.
        var appended = 0
        var written = 0
        /// Lines dropped since the writer last reported them, and in all.
        var droppedSinceReport = 0
        var droppedTotal = 0
        var isRunning = false
        /// The writer waits for lines (a line appended then must wake it; otherwise it takes the line anyway).
        var isWriterWaiting = false
    }

    /// How long the writer lets lines gather after a small batch: a busy server's lines go out a few hundred at a
    /// time, in one `write(2)`, rather than one wake-up and one write each.
    static let gatheringPause: Duration = .milliseconds(2)
    /// A batch this large is followed by the next at once.
    static let largeBatchBytes = 65_536

    /// The most bytes waiting before lines are dropped (1 MiB: thousands of lines, a second of a busy server's).
    static let byteLimit = 1 << 20

    /// The writer of this process's standard output.
    static let standardOutput = LogWriter(descriptor: 1)

    private let descriptor: Int32
    private let byteLimit: Int
    private let state = Monitor(State())

    /// A writer to `descriptor`; its thread starts with the first line.
    /// - Parameters:
    ///   - descriptor: where the lines go.
    ///   - byteLimit: the most bytes waiting before lines are dropped.
    init(descriptor: Int32, byteLimit: Int = LogWriter.byteLimit) {
        self.descriptor = descriptor
        self.byteLimit = byteLimit
    }

    /// Lines dropped so far because the buffer was full.
    var droppedLineCount: Int { state.withLock { $0.droppedTotal } }

    /// Appends `line` (with its newline) for the writer thread, or drops it when the buffer is full.
    /// - Returns: whether the line was taken.
    @discardableResult
    func append(_ line: [UInt8]) -> Bool {
        line.withUnsafeBufferPointer { append($0) }
    }

    /// Appends the bytes of `line` (with its newline) for the writer thread, or drops it when the buffer is full.
    /// - Returns: whether the line was taken.
    @discardableResult
    func append(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        enum Admission { case dropped, queued, queuedFirst, queuedAndStart }
        let admission: Admission = state.withLock { state in
            guard state.pending.count + line.count <= byteLimit else {
                state.droppedSinceReport += 1
                state.droppedTotal += 1
                return .dropped
            }
            state.pending.append(contentsOf: line)
            state.appended += line.count
            if !state.isRunning {
                state.isRunning = true
                return .queuedAndStart
            }
            guard state.isWriterWaiting else { return .queued }
            state.isWriterWaiting = false
            return .queuedFirst
        }
        switch admission {
        case .dropped: return false
        case .queued: return true
        // Only a waiting writer needs waking; awake (or pausing), it takes whatever is there.
        case .queuedFirst: state.broadcast()
        case .queuedAndStart: startThread()
        }
        return true
    }

    /// Waits until every line appended before the call is written (or given up on: a descriptor that refuses it),
    /// but no longer than `timeout`: a reader of standard output that stopped must not keep a server from stopping.
    /// - Returns: whether everything was written in time.
    @discardableResult
    func flush(timeout: Duration = .seconds(2)) -> Bool {
        let target = state.withLock { $0.appended }
        let deadline = ContinuousClock.now + timeout
        while true {
            if state.withLock({ $0.written >= target || !$0.isRunning }) { return true }
            if ContinuousClock.now >= deadline { return false }
            pause(.milliseconds(1))
        }
    }

    private func startThread() {
        if case .success(let thread) = Threads.start({ self.run() }) {
            pthread_detach(thread)
            // A process that exits (`exit`, or returning from `main`) writes what is waiting first.
            if descriptor == 1 { atexit { LogWriter.standardOutput.flush() } }
            return
        }
        // No thread: write on this one, as before there was a writer (the line is not lost).
        let batch = state.withLock { state -> [UInt8] in
            state.isRunning = false
            defer { state.pending = [] }
            state.written = state.appended
            return state.pending
        }
        writeAll(batch)
    }

    /// The writer thread: takes what has gathered, writes it, and again, for the life of the process.
    private func run() {
        var spare: [UInt8] = []
        while true {
            let (batch, dropped) = state.withLock(when: { state in
                let isReady = !state.pending.isEmpty || state.droppedSinceReport > 0
                state.isWriterWaiting = !isReady
                return isReady
            }) { state -> ([UInt8], Int) in
                var batch = spare
                swap(&batch, &state.pending)
                defer { state.droppedSinceReport = 0 }
                return (batch, state.droppedSinceReport)
            }
            let lost = writeAll(batch)
            if dropped > 0 {
                // Not counted when it is lost itself: a descriptor that takes nothing must not keep it reporting.
                writeAll(Logger.line(.warning, "log_lines_dropped", [("count", .int(dropped))]))
            }
            state.withLock { state in
                state.written += batch.count
                // What the descriptor did not take is reported with the next batch.
                state.droppedTotal += lost
                state.droppedSinceReport += lost
            }
            state.broadcast()
            let wasSmall = batch.count < Self.largeBatchBytes
            spare = batch
            spare.removeAll(keepingCapacity: spare.capacity <= 4 * Self.largeBatchBytes)
            if wasSmall { pause(Self.gatheringPause) }
        }
    }

    private func pause(_ duration: Duration) {
        var request = timespec(tv_sec: Int(duration.components.seconds), tv_nsec: Int(duration.components.attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// Writes `bytes` whole, unless the descriptor does not take them (an error, or one that stays full for a
    /// second when it does not block).
    /// - Returns: how many lines were not written (a line begun is ended, so the next one starts whole).
    @discardableResult
    private func writeAll(_ bytes: [UInt8]) -> Int {
        let unwritten: Int = bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if written > 0 {
                    offset += written
                    continue
                }
                if written < 0 && errno == EINTR { continue }
                if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    if poll(&waiting, 1, 1_000) > 0 { continue }
                }
                return offset
            }
            return buffer.count
        }
        guard unwritten < bytes.count else { return 0 }
        if unwritten > 0 && bytes[unwritten - 1] != 10 { _ = write(descriptor, [10], 1) }
        return bytes[unwritten...].reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
    }
}
