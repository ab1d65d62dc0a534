internal import CMicroHTTPD
import Dispatch
import Locking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A Server-Sent Events stream: send events from any thread; they reach the client in order.
///
/// Return it from a handler with ``HTTPResponse/eventStream(_:)``. The server takes the stream's socket out of
/// libmicrohttpd (which then frees the connection and its memory pool) and writes the stream itself: its head,
/// with `Connection: close`, then the bytes sent to it as the socket takes them. An idle stream costs no CPU and
/// keeps no buffer. Its socket is watched for the client hanging up (FIN or RST), so a client that goes away
/// ends the stream within moments (not at the next write) and its termination handlers run; the server also
/// writes a heartbeat comment at its configured interval. A stream whose unsent bytes would exceed its buffer
/// limit ends too (the client is expected to reconnect with `Last-Event-ID`). Should the socket not be taken
/// over (no watcher thread, no descriptor to spare), the library serves the stream as a chunked response instead.
///
/// ```swift
/// let stream = EventStream()
/// stream.onTermination { reason in print("stream ended: \(reason)") }
/// stream.send(event: "patch", id: "17", data: #"{"rev":3}"#)
/// return .eventStream(stream)
/// ```
public final class EventStream: Sendable {
    /// Why a stream ended.
    public enum Termination: Sendable, Equatable {
        /// ``close()`` was called.
        case closedByServer
        /// The client disconnected (noticed at once, by its hang-up or a failed write), or took none of the
        /// stream's pending bytes for the server's `connectionTimeoutSeconds`.
        case clientDisconnected
        /// More unsent bytes than the buffer limit allows: the client was too slow.
        case bufferOverflow
        /// The server is stopping.
        case serverStopping
        /// The stream was never sent (the response was not queued).
        case neverStarted
    }

    private struct State {
        var pending: [UInt8] = []
        var readOffset = 0
        /// Set once no more bytes may be added; the reader ends the response when `pending` is drained.
        var closing: Termination?
        /// Set once the library released the response: the stream is over.
        var finished: Termination?
        var connection: ConnectionHandle?
        var suspended = false
        /// The connection's socket, watched for the client hanging up while the connection is suspended.
        var descriptor: Int32 = -1
        var watcher: ConnectionWatcher?
        /// Set while the watcher holds the socket (only ever while suspended).
        var watchToken: UInt64?
        var terminationHandlers: [@Sendable (Termination) -> Void] = []
        var unregister: (@Sendable () -> Void)?
        /// The socket MicroHTTP serves the stream on itself once it took it over from the library (see
        /// ``takeOver(socket:head:watcher:unregister:)``), -1 otherwise. The stream's own duplicate of the
        /// connection's descriptor: touched only under this lock, closed exactly once (`finishTakenOver`).
        var ownSocket: Int32 = -1
        /// Whether the watcher also waits for `ownSocket` to become writable: the kernel took only part of
        /// `pending`, and the rest goes out from the watcher's thread.
        var awaitingWritable = false
        /// When the client last took bytes while `awaitingWritable` (or the wait began), in milliseconds of
        /// `ConnectionWatcher.nowMilliseconds()`.
        var lastWriteProgress: UInt64 = 0
    }

    /// What is left to do, outside the lock, once a taken-over stream is over.
    private struct Ending: Sendable {
        let reason: Termination
        let handlers: [@Sendable (Termination) -> Void]
        let unregister: (@Sendable () -> Void)?

        func run() {
            unregister?()
            for handler in handlers { handler(reason) }
        }

        /// Runs it on another thread: for an ending caused by ``send(bytes:)``, ``close()`` or `end`, whose caller
        /// may hold its own locks (MVVMRServer sends events inside its session's lock) that the termination handlers
        /// take (a session detaches the stream). Run inline they would deadlock, or trap on a lock taken twice. As on
        /// the library's path, handlers run after the call that ended the stream has returned.
        func runElsewhere() {
            DispatchQueue.global().async { run() }
        }
    }

    private let state: Locked<State>
    /// The most unsent bytes this stream holds before it ends with ``Termination/bufferOverflow``.
    public let bufferLimit: Int

    /// Creates a stream.
    /// - Parameter bufferLimit: the most unsent bytes held before the stream ends as too slow; 1 MiB by default.
    public init(bufferLimit: Int = 1 << 20) {
        self.bufferLimit = max(1, bufferLimit)
        state = Locked(State())
    }

    /// Whether the stream has ended or is ending (nothing more can be sent).
    public var isClosed: Bool {
        state.withLock { $0.closing != nil || $0.finished != nil }
    }

    /// Registers code to run once when the stream is over (runs at once if it already is).
    /// - Parameter handler: receives the reason.
    public func onTermination(_ handler: @escaping @Sendable (Termination) -> Void) {
        let finished: Termination? = state.withLock { state in
            if let finished = state.finished { return finished }
            state.terminationHandlers.append(handler)
            return nil
        }
        if let finished { handler(finished) }
    }

    /// Sends one event.
    /// - Parameters:
    ///   - event: the event type (`event:` line), or `nil` for the default `message`.
    ///   - id: the event id (`id:` line), or `nil`.
    ///   - data: the payload; each of its lines becomes a `data:` line.
    /// - Returns: `false` when the stream is closed or just overflowed.
    @discardableResult
    public func send(event: String? = nil, id: String? = nil, data: String) -> Bool {
        var frame: [UInt8] = []
        frame.reserveCapacity(data.utf8.count + 32)
        if let id {
            frame.append(contentsOf: "id: ".utf8)
            frame.append(contentsOf: Self.singleLine(id))
            frame.append(10)
        }
        if let event {
            frame.append(contentsOf: "event: ".utf8)
            frame.append(contentsOf: Self.singleLine(event))
            frame.append(10)
        }
        var lineStart = true
        for byte in data.utf8 {
            if lineStart {
                frame.append(contentsOf: "data: ".utf8)
                lineStart = false
            }
            if byte == 10 {
                frame.append(10)
                lineStart = true
            } else if byte != 13 {
                frame.append(byte)
            }
        }
        if lineStart { frame.append(contentsOf: "data: ".utf8) }
        frame.append(contentsOf: [10, 10])
        return send(bytes: frame)
    }

    /// Sends a comment line (`: text`), which clients ignore; used for heartbeats.
    /// - Parameter text: the comment.
    /// - Returns: `false` when the stream is closed.
    @discardableResult
    public func sendComment(_ text: String) -> Bool {
        var frame: [UInt8] = [UInt8(ascii: ":"), UInt8(ascii: " ")]
        frame.append(contentsOf: Self.singleLine(text))
        frame.append(contentsOf: [10, 10])
        return send(bytes: frame)
    }

    /// Sends bytes exactly as given (already framed as SSE).
    /// - Parameter bytes: the bytes.
    /// - Returns: `false` when the stream is closed or just overflowed.
    @discardableResult
    public func send(bytes: [UInt8]) -> Bool {
        let (accepted, ending) = state.withLock { state -> (Bool, Ending?) in
            guard state.closing == nil, state.finished == nil else { return (false, nil) }
            if state.pending.count - state.readOffset + bytes.count > bufferLimit {
                state.closing = .bufferOverflow
                state.pending.removeAll()
                state.readOffset = 0
                if state.ownSocket >= 0 { return (false, Self.finishTakenOver(&state, reason: .bufferOverflow)) }
                Self.resumeIfSuspended(&state)
                return (false, nil)
            }
            state.pending.append(contentsOf: bytes)
            if state.ownSocket >= 0 { return (true, Self.flush(&state)) }
            Self.resumeIfSuspended(&state)
            return (true, nil)
        }
        ending?.runElsewhere()
        return accepted
    }

    /// Ends the stream after the bytes already sent to it have gone out.
    public func close() {
        end(.closedByServer)
    }

    func end(_ reason: Termination) {
        let ending = state.withLock { state -> Ending? in
            guard state.closing == nil, state.finished == nil else { return nil }
            state.closing = reason
            // Taken over: over at once when nothing is pending, else once the watcher has written the rest.
            if state.ownSocket >= 0 { return Self.flush(&state) }
            Self.resumeIfSuspended(&state)
            return nil
        }
        ending?.runElsewhere()
    }

    // MARK: - Served by MicroHTTP (taken over from the library)

    /// Serves the stream on `socket`, a duplicate of its connection's descriptor that the stream now owns (and
    /// closes): writes `head` and whatever was sent before, and has `watcher` report the client hanging up
    /// and, while bytes are pending, the socket becoming writable. With `headOnly` (a `HEAD` request) only the
    /// head goes out, and the stream is over with ``Termination/neverStarted`` (unless it was closed already).
    /// - Returns: `false`, with nothing changed and `socket` still the caller's, when the watcher cannot watch
    ///   it or the stream was already handed to the library.
    func takeOver(
        socket: Int32, head: [UInt8], headOnly: Bool = false, watcher: ConnectionWatcher,
        unregister: @escaping @Sendable () -> Void
    ) -> Bool {
        let (taken, ending) = state.withLock { state -> (Bool, Ending?) in
            guard state.finished == nil, state.connection == nil, state.ownSocket < 0 else { return (false, nil) }
            guard let token = watcher.watch(self, descriptor: socket) else { return (false, nil) }
            state.ownSocket = socket
            state.descriptor = socket
            state.watcher = watcher
            state.watchToken = token
            state.unregister = unregister
            if headOnly {
                state.pending = head
                state.closing = state.closing ?? .neverStarted
            } else {
                // Nothing was read yet (the library never saw this stream), so the head goes first.
                state.pending.insert(contentsOf: head, at: 0)
            }
            return (true, Self.writePending(&state))
        }
        ending?.run()
        return taken
    }

    /// The watcher saw the stream's socket hang up (the client left) or, when `writable`, ready for more bytes.
    func socketReady(hangUp: Bool, writable: Bool) {
        let ending = state.withLock { state -> Ending? in
            // Over already (the socket is closed and its number may be another's), or served by the library.
            guard state.ownSocket >= 0 else { return nil }
            if hangUp { return Self.finishTakenOver(&state, reason: state.closing ?? .clientDisconnected) }
            return writable ? Self.writePending(&state) : nil
        }
        if let ending {
            ending.run()
        } else if hangUp {
            // A suspended stream the library serves (it is not watched otherwise): ending it resumes the
            // connection, and the library then closes it.
            end(.clientDisconnected)
        }
    }

    /// Ends a taken-over stream at once, unsent bytes and all: the server is stopping and its grace is over.
    /// Does nothing to a stream the library serves (stopping the library ends it).
    func abandonIfTakenOver() {
        let ending = state.withLock { state -> Ending? in
            guard state.ownSocket >= 0 else { return nil }
            return Self.finishTakenOver(&state, reason: state.closing ?? .serverStopping)
        }
        ending?.run()
    }

    /// The watcher's tick: ends the stream (`.clientDisconnected`, unless it was ending already) when bytes have
    /// been pending for `timeoutMilliseconds` without its client taking any. The library's inactivity timeout did
    /// the same for the streams it served, so a client that stops reading does not hold its buffer for as long as
    /// the heartbeats alone would take to fill it.
    func endIfStalled(now: UInt64, timeoutMilliseconds: UInt64) {
        let ending = state.withLock { state -> Ending? in
            guard state.ownSocket >= 0, state.awaitingWritable,
                now >= state.lastWriteProgress + timeoutMilliseconds
            else { return nil }
            return Self.finishTakenOver(&state, reason: state.closing ?? .clientDisconnected)
        }
        ending?.run()
    }

    /// Writes what is pending unless the watcher is already waiting to write it.
    private static func flush(_ state: inout State) -> Ending? {
        state.awaitingWritable ? nil : writePending(&state)
    }

    /// Writes pending bytes until they are all out (an idle stream then keeps no buffer, and a closing one is
    /// over) or the kernel's send buffer is full (the watcher then waits for the socket to become writable).
    /// A failed write means the client is gone.
    private static func writePending(_ state: inout State) -> Ending? {
        let socket = state.ownSocket
        while state.readOffset < state.pending.count {
            let offset = state.readOffset
            let sent = state.pending.withUnsafeBytes { bytes -> Int in
                guard let base = bytes.baseAddress else { return 0 }
                return mvvmr_stream_send(socket, base + offset, bytes.count - offset)
            }
            if sent > 0 {
                state.readOffset += sent
                if state.awaitingWritable { state.lastWriteProgress = ConnectionWatcher.nowMilliseconds() }
                continue
            }
            guard sent == 0 || sent == -Int(EAGAIN) || sent == -Int(EWOULDBLOCK) else {
                return finishTakenOver(&state, reason: state.closing ?? .clientDisconnected)
            }
            if !state.awaitingWritable, let token = state.watchToken {
                state.awaitingWritable = true
                state.lastWriteProgress = ConnectionWatcher.nowMilliseconds()
                state.watcher?.setWritableInterest(true, token: token, descriptor: socket)
            }
            // A client that keeps up only just never lets the buffer drain: drop what went out once it is most of
            // it, so the buffer holds what is unsent (at most `bufferLimit`), not all the stream ever sent.
            if state.readOffset >= 64 * 1024 && state.readOffset * 2 >= state.pending.count {
                state.pending.removeFirst(state.readOffset)
                state.readOffset = 0
            }
            return nil
        }
        state.pending = []
        state.readOffset = 0
        if state.awaitingWritable, let token = state.watchToken {
            state.awaitingWritable = false
            state.watcher?.setWritableInterest(false, token: token, descriptor: socket)
        }
        if let closing = state.closing { return finishTakenOver(&state, reason: closing) }
        return nil
    }

    /// The end of a taken-over stream: its socket leaves the watcher and is closed (the only close of it), and
    /// the stream is over with `reason`.
    private static func finishTakenOver(_ state: inout State, reason: Termination) -> Ending {
        if let token = state.watchToken {
            state.watchToken = nil
            state.watcher?.unwatch(token: token, descriptor: state.ownSocket)
        }
        closeDescriptor(state.ownSocket)
        state.ownSocket = -1
        state.descriptor = -1
        state.awaitingWritable = false
        state.watcher = nil
        state.closing = state.closing ?? reason
        state.finished = reason
        state.pending = []
        state.readOffset = 0
        let ending = Ending(reason: reason, handlers: state.terminationHandlers, unregister: state.unregister)
        state.terminationHandlers = []
        state.unregister = nil
        return ending
    }

    // MARK: - Served by the library (the fallback)

    /// Called once the response carrying this stream is queued on `connection`, whose socket is `descriptor`
    /// (-1 when unknown: the client's leaving is then noticed at the next write only).
    func attach(
        to connection: ConnectionHandle, descriptor: Int32, watcher: ConnectionWatcher?,
        unregister: @escaping @Sendable () -> Void
    ) {
        state.withLock { state in
            state.connection = connection
            state.descriptor = descriptor
            state.watcher = watcher
            state.unregister = unregister
        }
    }

    /// Fills `buffer` for the library. Returns the count written, 0 after suspending the connection
    /// (nothing pending), or -1 to end the response.
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        state.withLock { state in
            let available = state.pending.count - state.readOffset
            if available > 0 {
                let count = min(available, capacity)
                state.pending.withUnsafeBytes { source in
                    if let base = source.baseAddress {
                        UnsafeMutableRawPointer(buffer).copyMemory(from: base + state.readOffset, byteCount: count)
                    }
                }
                state.readOffset += count
                if state.readOffset == state.pending.count {
                    state.pending.removeAll(keepingCapacity: state.pending.capacity <= 64 * 1024)
                    state.readOffset = 0
                }
                return count
            }
            if state.closing != nil { return -1 }
            guard let connection = state.connection else { return -1 }
            // Nothing to send: suspend rather than return 0 alone, which would make the library poll
            // this connection in a busy loop. `send` resumes it. An idle stream keeps no buffer: with
            // thousands of streams open, the capacity kept for the next burst would add up.
            if state.pending.capacity > 0 { state.pending = [] }
            state.suspended = true
            MHD_suspend_connection(connection.pointer)
            // A suspended connection is not polled, so the library would not see the client leave: the watcher
            // looks out for that (and ends the stream) until the connection is resumed.
            if let watcher = state.watcher, state.descriptor >= 0 {
                state.watchToken = watcher.watch(self, descriptor: state.descriptor)
            }
            return 0
        }
    }

    /// Called when the library released the response: the stream is over for good.
    func finish() {
        let (handlers, reason, unregister): ([@Sendable (Termination) -> Void], Termination, (@Sendable () -> Void)?) =
            state.withLock { state in
                let reason = state.closing ?? (state.connection == nil ? .neverStarted : .clientDisconnected)
                state.finished = reason
                state.connection = nil
                state.suspended = false
                // Never still watched here (resuming unwatches); should it be, forget the token only: the
                // descriptor may already belong to another connection.
                state.watchToken = nil
                state.watcher = nil
                state.pending = []
                state.readOffset = 0
                let handlers = state.terminationHandlers
                state.terminationHandlers = []
                let unregister = state.unregister
                state.unregister = nil
                return (handlers, reason, unregister)
            }
        unregister?()
        for handler in handlers { handler(reason) }
    }

    /// Resumes the connection if `read` suspended it. Done while holding the stream's lock so that a resume
    /// can never race the server's shutdown (which ends every stream, under this lock, before it stops the
    /// library). The library never calls back into a stream while it holds its own lock for a suspended
    /// connection, so this cannot deadlock.
    private static func resumeIfSuspended(_ state: inout State) {
        guard state.suspended, let connection = state.connection else { return }
        state.suspended = false
        // Before the resume: once resumed, the library may close the descriptor at any moment.
        if let token = state.watchToken {
            state.watchToken = nil
            state.watcher?.unwatch(token: token, descriptor: state.descriptor)
        }
        MHD_resume_connection(connection.pointer)
    }

    private static func singleLine(_ text: String) -> [UInt8] {
        text.utf8.filter { $0 != 10 && $0 != 13 }
    }
}

/// Closes a stream's socket, after dropping whatever its client sent that was never read (so that the kernel ends
/// the connection with a FIN, not a reset that could cost the client the stream's last bytes). A free function:
/// inside ``EventStream``, `close` names the stream's own method.
private func closeDescriptor(_ descriptor: Int32) {
    mvvmr_discard_input(descriptor)
    _ = close(descriptor)
}
