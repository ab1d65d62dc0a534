import Foundation
import JSONPatch
import MVVMR
import MVVMRServer
import Synchronization
import Testing

@testable import MVVMRClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real page server on 127.0.0.1 with the test units; `home` is the root.
final class TestServer: Sendable {
    let server: PageServer
    let deliveries: DeliveryCounter
    let forecastCalls: ForecastCalls
    let port: Int

    /// Starts a server on `port` (0: any free port), keeping session logs in `store` (in memory by default).
    init(
        port: Int = 0, deliveries: DeliveryCounter = DeliveryCounter(), store: (any SessionStore)? = nil,
        units: [UnitCase] = [.home, .editor, .counter, .forecast, .ticker], root: UnitCase = .home,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) throws {
        var services = Services()
        services.register(deliveries)
        let forecastCalls = ForecastCalls()
        self.forecastCalls = forecastCalls
        services.register(forecastCalls)
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = port
        configuration.logLevel = .off
        configuration.publicDirectory = "/nonexistent"
        configuration.heartbeatSeconds = 1
        configuration.threads = 4
        configuration.shutdownGraceSeconds = 1
        configure(&configuration)
        server = PageServer(units: units, root: root, services: services, configuration: configuration, store: store)
        try server.start()
        self.deliveries = deliveries
        self.port = server.port
    }

    var baseURL: URL {
        get throws { try #require(URL(string: "http://127.0.0.1:\(port)")) }
    }

    func stop() {
        server.stop(gracePeriod: .milliseconds(300))
    }

    /// A client of this server with short delays, so that tests stay fast.
    func client(transport: (any PageTransport)? = nil) throws -> PageClient {
        var configuration = PageClientConfiguration()
        configuration.retryBaseDelay = 0.05
        configuration.maxRetryDelay = 0.2
        configuration.reconnectDelay = 0.1
        configuration.maxReconnectDelay = 0.3
        configuration.requestTimeout = 5
        configuration.eventStreamIdleTimeout = 5
        return PageClient(baseURL: try baseURL, configuration: configuration, transport: transport)
    }

    /// A fresh `GET /api/pages/{unit}` in `session`, outside the client: the server's page now.
    func fetchPage(_ unit: String, session: String) async throws -> (rev: Int, view: JSONValue) {
        var request = URLRequest(url: try baseURL.appendingPathComponent("api/pages/\(unit)"))
        request.setValue(session, forHTTPHeaderField: "X-Session-ID")
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let body = try JSONValue(parsing: data)
        return (try #require(body["rev"]?.intValue), try #require(body["view"]))
    }

    /// `DELETE /api/session` outside the client: the session ends (its streams get `expired`).
    func deleteSession(_ session: String) async throws {
        var request = URLRequest(url: try baseURL.appendingPathComponent("api/session"))
        request.httpMethod = "DELETE"
        request.setValue(session, forHTTPHeaderField: "X-Session-ID")
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 204)
    }
}

/// Records every change a client reports.
final class ChangeRecorder: Sendable {
    private final class Box: Sendable {
        let changes = Mutex<[PageClientChange]>([])
    }
    private let box = Box()
    private let task: Task<Void, Never>

    init(_ client: PageClient) {
        let stream = client.changes()
        let box = self.box
        task = Task {
            for await change in stream { box.changes.withLock { $0.append(change) } }
        }
    }

    deinit { task.cancel() }

    var changes: [PageClientChange] { box.changes.withLock { $0 } }

    func contains(_ predicate: (PageClientChange) -> Bool) -> Bool { box.changes.withLock { $0.contains(where: predicate) } }
}

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Polls `condition` every 10 ms until it holds; throws after `timeout` seconds.
func waitUntil(
    _ what: String, timeout: TimeInterval = 5, _ condition: @Sendable () async throws -> Bool
) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try await condition() { return }
        try await Task.sleep(nanoseconds: 10_000_000)
    }
    if try await condition() { return }
    throw TimedOut(what: what)
}

/// A transport that forwards to the real one and injects failures: an answer lost after the server
/// handled the request, or a `503` before it.
final class FlakyTransport: PageTransport {
    struct Record: Sendable {
        let method: String
        let path: String
        let idempotencyKey: String?
        let failure: String?
    }

    private let inner = URLSessionPageTransport(timeout: 5)
    private let state = Mutex<(loseAnswers: Int, unavailable: Int, records: [Record])>((0, 0, []))
    private let matching: @Sendable (URLRequest) -> Bool

    /// Injects failures only into requests `matching` picks (all actions by default).
    init(matching: @escaping @Sendable (URLRequest) -> Bool = { $0.url?.path.hasSuffix("/actions") == true }) {
        self.matching = matching
    }

    /// The next `count` matching requests reach the server, but their answers are lost.
    func loseAnswers(_ count: Int) { state.withLock { $0.loseAnswers = count } }

    /// The next `count` matching requests are answered `503` with `Retry-After` without reaching the server.
    func answerUnavailable(_ count: Int) { state.withLock { $0.unavailable = count } }

    var records: [Record] { state.withLock { $0.records } }

    func send(_ request: URLRequest) async throws -> TransportResponse {
        enum Fault { case none, lose, unavailable }
        let fault = state.withLock { state -> Fault in
            guard matching(request) else { return .none }
            if state.unavailable > 0 {
                state.unavailable -= 1
                return .unavailable
            }
            if state.loseAnswers > 0 {
                state.loseAnswers -= 1
                return .lose
            }
            return .none
        }
        let record = { (failure: String?) in
            Record(
                method: request.httpMethod ?? "GET", path: request.url?.path ?? "",
                idempotencyKey: request.value(forHTTPHeaderField: "Idempotency-Key"), failure: failure)
        }
        switch fault {
        case .unavailable:
            state.withLock { $0.records.append(record("503")) }
            return TransportResponse(
                status: 503, headers: ["Retry-After": "0.1", "Content-Type": "application/json"],
                body: Data(#"{"error":{"code":"overloaded","message":"try later"}}"#.utf8))
        case .lose:
            _ = try await inner.send(request)
            state.withLock { $0.records.append(record("lost")) }
            throw URLError(.networkConnectionLost)
        case .none:
            let response = try await inner.send(request)
            state.withLock { $0.records.append(record(nil)) }
            return response
        }
    }
}
