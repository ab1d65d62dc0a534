import Foundation
import Locking
import MicroHTTP
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Tag {
    /// Tests that run threads against a live server; CI runs them under ThreadSanitizer.
    @Tag static var concurrency: Self
}

/// Runs blocking work (sockets, `HTTPServer.stop`) on a thread of its own, never on the cooperative pool:
/// the server's asynchronous handlers run on that pool, and a test blocking it would starve them.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.start()
    }
}

/// `blocking` for work that cannot fail.
func blocking<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        let thread = Thread {
            continuation.resume(returning: body())
        }
        thread.start()
    }
}

/// Stops `server` with `gracePeriod` off the cooperative pool, and returns how long `stop` took.
func timedStop(_ server: HTTPServer, gracePeriod: Duration) async -> Duration {
    await blocking { () -> Duration in
        let start = ContinuousClock.now
        server.stop(gracePeriod: gracePeriod)
        return ContinuousClock.now - start
    }
}

/// Runs `body` for clients `0..<count` at once, each on a thread of its own, and returns what they all reported
/// wrong (empty when every client saw what it expected).
func failuresOfClients(
    _ count: Int, _ body: @escaping @Sendable (_ client: Int) throws -> [String]
) async throws -> [String] {
    try await withThrowingTaskGroup(of: [String].self) { group in
        for client in 0..<count {
            group.addTask { try await blocking { try body(client) } }
        }
        var wrong: [String] = []
        for try await failures in group { wrong += failures }
        return wrong
    }
}

/// Polls `condition` until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
        if condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: interval)
    }
}

/// A value shared between a handler and the test.
final class Box<Value: Sendable>: Sendable {
    private let locked: Locked<Value>
    init(_ value: Value) { locked = Locked(value) }
    var value: Value {
        get { locked.withLock { $0 } }
        set { locked.withLock { $0 = newValue } }
    }
    func update<Result: Sendable>(_ body: @Sendable (inout Value) -> Result) -> Result { locked.withLock { body(&$0) } }
}

/// A counter shared between handlers and the test.
final class Counter: Sendable {
    private let locked = Locked(0)
    func increment() { locked.withLock { $0 += 1 } }
    var value: Int { locked.withLock { $0 } }
}

/// A gate asynchronous handlers wait at until the test opens it.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var arrivals = 0
    }

    private let state = Locked(State())

    /// How many waits began (the handler reached the gate).
    var arrivals: Int { state.withLock { $0.arrivals } }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                state.arrivals += 1
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            let waiters = state.waiters
            state.waiters = []
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Lets the one test that measures the whole process's CPU time run alone: every server test holds a
/// shared lease; the measurement holds an exclusive one (waiting writers block new readers).
final class ServerLease: Sendable {
    static let shared = ServerLease()

    private struct State {
        var readers = 0
        var writer = false
        var waitingReaders: [CheckedContinuation<Void, Never>] = []
        var waitingWriters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    func withShared<T>(_ body: () async throws -> T) async throws -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if !state.writer && state.waitingWriters.isEmpty {
                    state.readers += 1
                    return true
                }
                state.waitingReaders.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
        defer { releaseShared() }
        return try await body()
    }

    func withExclusive<T>(_ body: () async throws -> T) async throws -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if !state.writer && state.readers == 0 {
                    state.writer = true
                    return true
                }
                state.waitingWriters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
        defer { releaseExclusive() }
        return try await body()
    }

    private func releaseShared() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.readers -= 1
            if state.readers == 0 && !state.waitingWriters.isEmpty {
                state.writer = true
                return state.waitingWriters.removeFirst()
            }
            return nil
        }
        next?.resume()
    }

    private func releaseExclusive() {
        let next = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.writer = false
            if !state.waitingWriters.isEmpty {
                state.writer = true
                return [state.waitingWriters.removeFirst()]
            }
            let readers = state.waitingReaders
            state.waitingReaders = []
            state.readers += readers.count
            return readers
        }
        for continuation in next { continuation.resume() }
    }
}

/// Starts a server on 127.0.0.1 and port 0 with `router`, runs `body`, then stops it (also on failure).
@discardableResult
func withServer<T>(
    router: HTTPRouter,
    exclusive: Bool = false,
    configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    _ body: (HTTPServer) async throws -> T
) async throws -> T {
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    configuration.threadCount = 2
    configuration.connectionTimeoutSeconds = 10
    configure(&configuration)
    let run = { () async throws -> T in
        let server = HTTPServer(configuration: configuration, router: router)
        try server.start()
        do {
            let result = try await body(server)
            await blocking { server.stop(gracePeriod: .seconds(1)) }
            return result
        } catch {
            await blocking { server.stop(gracePeriod: .milliseconds(100)) }
            throw error
        }
    }
    return exclusive ? try await ServerLease.shared.withExclusive(run) : try await ServerLease.shared.withShared(run)
}

/// A temporary directory, removed with everything in it by `remove()`.
struct TemporaryDirectory: Sendable {
    let path: String

    init() throws {
        var template = Array("/tmp/microhttp-tests-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let result = mkdtemp(buffer.baseAddress!) else { return nil }
            return String(cString: result)
        }
        guard let made else { throw ClientError.socket("mkdtemp", errno) }
        path = made
    }

    func write(_ relativePath: String, _ contents: String) throws {
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path + "/" + relativePath))
    }

    func makeDirectory(_ relativePath: String) throws {
        try FileManager.default.createDirectory(atPath: path + "/" + relativePath, withIntermediateDirectories: true)
    }

    func symlink(_ relativePath: String, to destination: String) throws {
        try FileManager.default.createSymbolicLink(atPath: path + "/" + relativePath, withDestinationPath: destination)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Parses a JSON object body with Foundation.
func jsonObject(_ bytes: [UInt8]) throws -> [String: Any] {
    let value = try JSONSerialization.jsonObject(with: Data(bytes))
    guard let object = value as? [String: Any] else { throw ClientError.malformed("not a JSON object") }
    return object
}

/// The `error.code` of a MicroHTTP JSON error body, or `nil`.
func errorCode(_ response: RawResponse) -> String? {
    guard let object = try? jsonObject(response.body), let error = object["error"] as? [String: Any] else { return nil }
    return error["code"] as? String
}

/// The `error.details.problem` of a MicroHTTP JSON error body, or `nil`.
func errorProblem(_ response: RawResponse) -> String? {
    guard let object = try? jsonObject(response.body), let error = object["error"] as? [String: Any],
        let details = error["details"] as? [String: Any]
    else { return nil }
    return details["problem"] as? String
}

/// FNV-1a, 64 bits: a checksum both ends compute the same way.
func fnv1a(_ bytes: [UInt8]) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
    }
    return hash
}

/// The engine every server of this run uses: `MICROHTTP_ENGINE` overrides the configuration's (the suite runs on
/// each engine in turn; see .ci/run).
var testEngine: HTTPServerConfiguration.Engine {
    guard let chosen = getenv("MICROHTTP_ENGINE") else { return HTTPServerConfiguration().engine }
    return HTTPServerConfiguration.Engine(rawValue: String(cString: chosen)) ?? HTTPServerConfiguration().engine
}

/// The ids of the process's server threads that poll connections: libmicrohttpd's workers (named `MHD-worker` by
/// the library), or the loops of MicroHTTP's own engine (`MicroHTTP-loop`).
func libraryWorkerThreadIDs() -> Set<Int> {
    var identifiers = Set<Int>()
    guard let directory = opendir("/proc/self/task") else { return identifiers }
    defer { closedir(directory) }
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard let identifier = Int(name) else { continue }
        let threadName = readSmallFile("/proc/self/task/\(identifier)/comm") ?? ""
        if threadName.hasPrefix("MHD-worker") || threadName.hasPrefix("MicroHTTP-loop") {
            identifiers.insert(identifier)
        }
    }
    return identifiers
}

/// CPU time (user + system) used so far by the given threads of this process, from `/proc/self/task/*/stat`.
/// Unlike the whole process's time, it does not count test suites running in parallel.
func threadsCPUTime(_ identifiers: Set<Int>) -> Duration {
    let ticksPerSecond = Int64(sysconf(Int32(_SC_CLK_TCK)))
    var ticks: Int64 = 0
    for identifier in identifiers {
        guard let stat = readSmallFile("/proc/self/task/\(identifier)/stat"), let close = stat.lastIndex(of: ")") else { continue }
        // Fields after the command name: state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        if fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]) { ticks += user + system }
    }
    return .milliseconds(ticks * 1000 / max(1, ticksPerSecond))
}

/// The threads among `identifiers` that used at least `threshold` of CPU in each of `seconds` consecutive
/// seconds, with the least each used in any one of them. A thread of this process that spins shows in every
/// second, with most of a core (400 ms is what the callers ask: a spin on a machine this loaded still gets that);
/// a worker of another suite's server, counted because it started meanwhile, is seldom that busy in all.
func threadsBusyEachSecond(_ identifiers: Set<Int>, seconds: Int, atLeast threshold: Duration) async throws
    -> [Int: Duration]
{
    var quietestSecond: [Int: Duration] = [:]
    for _ in 0..<seconds {
        let begin = identifiers.map { ($0, threadsCPUTime([$0])) }
        try await Task.sleep(for: .seconds(1))
        for (identifier, start) in begin {
            let used = threadsCPUTime([identifier]) - start
            quietestSecond[identifier] = min(quietestSecond[identifier] ?? used, used)
        }
    }
    return quietestSecond.filter { $0.value >= threshold }
}

private func readSmallFile(_ path: String) -> String? {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: 1024)
    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    guard count > 0 else { return nil }
    return String(decoding: buffer[0..<count], as: UTF8.self)
}

