internal import CMicroHTTPD
import Locking

/// A Server-Sent Events stream: send events from any thread; they reach the client in order.
///
/// Return it from a handler with ``HTTPResponse/eventStream(_:)``. While nothing is pending the
/// connection is suspended, so an idle stream costs no CPU. While suspended, its socket is watched for
/// the client hanging up (FIN or RST), so a client that goes away ends the stream within moments (not at
/// the next write) and its termination handlers run; the server also writes a heartbeat comment at its
/// configured interval. A stream whose unsent bytes would
/// exceed its buffer limit ends too (the client is expected to reconnect with `Last-Event-ID`).
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
        /// The client disconnected (noticed at once while the stream is idle, else at the next write).
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
        state.withLock { state in
            guard state.closing == nil, state.finished == nil else { return false }
            if state.pending.count - state.readOffset + bytes.count > bufferLimit {
                state.closing = .bufferOverflow
                state.pending.removeAll()
                state.readOffset = 0
                Self.resumeIfSuspended(&state)
                return false
            }
            state.pending.append(contentsOf: bytes)
            Self.resumeIfSuspended(&state)
            return true
        }
    }

    /// Ends the stream after the bytes already sent to it have gone out.
    public func close() {
        end(.closedByServer)
    }

    func end(_ reason: Termination) {
        state.withLock { state in
            guard state.closing == nil, state.finished == nil else { return }
            state.closing = reason
            Self.resumeIfSuspended(&state)
        }
    }

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
