import Foundation
import Locking
import Testing

@testable import MVVMRServer

/// A `nats-server` with JetStream that a test starts itself, on a free loopback port, with its store in a temporary
/// directory: `stop()` ends it (SIGTERM, then waits for it), `start()` starts it again on the same port and
/// directory (an outage and its end). `shared` is one server for the whole test process, stopped when it exits.
final class NATSTestServer: Sendable {
    let port: UInt16
    let directory: TemporaryStoreDirectory
    private let process = Locked<pid_t?>(nil)

    /// The URL stores connect to.
    var url: String { "nats://127.0.0.1:\(port)" }

    /// The process's shared server, started on first use and stopped at exit.
    static let shared: NATSTestServer? = {
        do {
            let server = try NATSTestServer()
            sharedProcess.withLock { $0 = server }
            atexit {
                guard let server = NATSTestServer.sharedProcess.withLock({ $0 }) else { return }
                server.stop()
                server.directory.remove()
            }
            return server
        } catch {
            Issue.record("cannot start nats-server: \(error)")
            return nil
        }
    }()
    private static let sharedProcess = Locked<NATSTestServer?>(nil)

    /// Starts a server on a free loopback port.
    init() throws {
        directory = try TemporaryStoreDirectory()
        port = try Self.freePort()
        try start()
    }

    deinit {
        stop()
        directory.remove()
    }

    /// Starts the server (again) and waits until its port accepts connections.
    func start() throws {
        let arguments = ["nats-server", "-js", "-a", "127.0.0.1", "-p", String(port), "-sd", directory.path + "/jetstream"]
        var pid = pid_t()
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, directory.path + "/nats-server.log", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        let spawned = posix_spawnp(&pid, "nats-server", &actions, nil, argv, environ)
        guard spawned == 0 else { throw NATSTestServerError(message: "posix_spawnp nats-server: \(String(cString: strerror(spawned)))") }
        process.withLock { $0 = pid }
        for _ in 0..<200 {
            if Self.accepts(port) { return }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                process.withLock { $0 = nil }
                throw NATSTestServerError(message: "nats-server exited at once (status \(status)); see \(directory.path)/nats-server.log")
            }
            usleep(50_000)
        }
        stop()
        throw NATSTestServerError(message: "nats-server did not accept connections on port \(port) within 10 s")
    }

    /// Stops the server (SIGTERM) and waits for it to exit. Stopping a stopped server does nothing.
    func stop() {
        guard let pid = process.withLock({ state -> pid_t? in defer { state = nil }; return state }) else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    private static func freePort() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw NATSTestServerError(message: "socket: errno \(errno)") }
        defer { close(descriptor) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw NATSTestServerError(message: "bind: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw NATSTestServerError(message: "getsockname: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    private static func accepts(_ port: UInt16) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

struct NATSTestServerError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Stream and bucket names no other test uses, so that tests sharing one server never see each other's sessions.
enum NATSTestNames {
    private static let counter = Locked(0)

    static func unique() -> String {
        let number = counter.withLock { value -> Int in
            value += 1
            return value
        }
        return "T\(getpid())_\(number)"
    }
}

/// Settings for a store on `server` under `name` (fresh names unless given).
func natsSettings(_ server: NATSTestServer, name: String = NATSTestNames.unique(), waitMilliseconds: Int64 = 3_000) -> NATSSessionStore.Settings {
    var settings = NATSSessionStore.Settings(servers: [server.url])
    settings.name = name
    settings.waitMilliseconds = waitMilliseconds
    return settings
}
