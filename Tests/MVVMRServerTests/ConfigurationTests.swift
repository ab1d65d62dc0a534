import Testing

@testable import MVVMRServer

@Suite struct ConfigurationTests {
    @Test func flagsWinOverTheEnvironment() throws {
        let configuration = try ServerConfiguration.parse(
            arguments: ["--port", "9000", "--max-sessions=5"],
            environment: ["PORT": "7000", "HOST": "127.0.0.1", "MAX_SESSIONS": "9", "LOG_LEVEL": "debug"])
        #expect(configuration.port == 9000)
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.maxSessions == 5)
        #expect(configuration.logLevel == .debug)
    }

    @Test func everyFixedNameIsReadFromTheEnvironment() throws {
        let configuration = try ServerConfiguration.parse(arguments: [], environment: [
            "PORT": "1", "HOST": "::1", "PUBLIC_DIR": "/srv", "PUBLIC_ORIGIN": "HTTPS://Example.com:443",
            "ALLOWED_ORIGINS": "https://a.example, http://b.example:8080", "TRUST_FORWARDED_HEADERS": "true",
            "MAX_SESSIONS": "2", "SESSION_TTL_SECONDS": "3", "MAX_BODY_BYTES": "4", "NEW_SESSIONS_PER_IP_PER_MINUTE": "5",
            "MAX_CONNECTIONS": "6", "MAX_CONNECTIONS_PER_IP": "7", "SHUTDOWN_GRACE_SECONDS": "8", "LOG_LEVEL": "off",
        ])
        #expect(configuration.port == 1)
        #expect(configuration.host == "::1")
        #expect(configuration.publicDirectory == "/srv")
        #expect(configuration.publicOrigin == "https://example.com")
        #expect(configuration.allowedOrigins == ["https://a.example", "http://b.example:8080"])
        #expect(configuration.trustForwardedHeaders)
        #expect(configuration.maxSessions == 2)
        #expect(configuration.sessionTimeToLiveSeconds == 3)
        #expect(configuration.maxBodyBytes == 4)
        #expect(configuration.newSessionsPerIPPerMinute == 5)
        #expect(configuration.maxConnections == 6)
        #expect(configuration.maxConnectionsPerIP == 7)
        #expect(configuration.shutdownGraceSeconds == 8)
        #expect(configuration.logLevel == .off)
    }

    @Test func theSessionStoreMayBeNATSJetStream() throws {
        let configuration = try ServerConfiguration.parse(
            arguments: [], environment: ["SESSION_STORE": "nats://127.0.0.1:4222,nats-2:4222", "NATS_REPLICAS": "3"])
        #expect(configuration.sessionStore == "nats://127.0.0.1:4222,nats-2:4222")
        #expect(configuration.natsReplicas == 3)
        for bad in ["nats://", "nats://host", "nats://host:port", "nats://a:1,", "natsx://a:1"] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try ServerConfiguration.parse(arguments: ["--session-store", bad], environment: [:])
            }
        }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.parse(arguments: ["--nats-replicas", "0"], environment: [:]) }
    }

    @Test(arguments: [
        ["--port", "70000"], ["--port"], ["--max-sessions", "many"], ["--log-level", "loud"], ["--bogus", "1"],
        ["--trust-forwarded-headers", "maybe"], ["--public-origin", "example.com"], ["--allowed-origins", "ftp://x"],
    ])
    func badSettingsAreClearErrors(arguments: [String]) {
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.parse(arguments: arguments, environment: [:])
        }
    }

    @Test func helpListsEveryFlagWithItsVariableAndDefault() {
        let help = ServerConfiguration.helpText
        for name in ServerConfiguration.environmentVariableNames { #expect(help.contains(name)) }
        #expect(help.contains("--max-sessions VALUE"))
        #expect(help.contains("(default: 8080)"))
    }
}

@Suite struct OriginPolicyTests {
    @Test func noOriginIsAllowedAndForeignOnesAreNot() {
        let policy = OriginPolicy(publicOrigin: "https://app.example.com", allowedOrigins: ["http://localhost:3000"])
        #expect(policy.allows(origin: nil, requestScheme: "http", requestHost: "x"))
        #expect(policy.allows(origin: "https://app.example.com", requestScheme: "http", requestHost: "internal:8080"))
        #expect(policy.allows(origin: "http://localhost:3000", requestScheme: "http", requestHost: "x"))
        // With a public origin the Host proves nothing (DNS rebinding): see OriginPolicyHostTests.
        #expect(!policy.allows(origin: "http://x:8080", requestScheme: "http", requestHost: "x:8080"))
        #expect(!policy.allows(origin: "http://x", requestScheme: "http", requestHost: "x:80"))
        #expect(!policy.allows(origin: "https://x:8080", requestScheme: "http", requestHost: "x:8080"))
        #expect(!policy.allows(origin: "null", requestScheme: "http", requestHost: "x"))
        #expect(!policy.allows(origin: "https://evil.example", requestScheme: "http", requestHost: "x"))
    }
}

@Suite struct MetricsTests {
    @Test func rendersCountersHistogramsAndGaugesInTheTextFormat() {
        let registry = MetricsRegistry()
        let counter = registry.counter("requests_total", help: "Requests.", labelNames: ["route"])
        counter.increment(["/a\"b"])
        counter.increment(["/a\"b"], by: 2)
        let histogram = registry.histogram("latency_seconds", help: "Latency.", buckets: [0.1, 1])
        histogram.observe(0.05)
        histogram.observe(5)
        registry.gauge("live", help: "Live things.") { 7 }
        let text = registry.render()
        #expect(text.contains("# TYPE requests_total counter\nrequests_total{route=\"/a\\\"b\"} 3\n"))
        #expect(text.contains("latency_seconds_bucket{le=\"0.1\"} 1\n"))
        #expect(text.contains("latency_seconds_bucket{le=\"1\"} 1\n"))
        #expect(text.contains("latency_seconds_bucket{le=\"+Inf\"} 2\n"))
        #expect(text.contains("latency_seconds_count 2\n"))
        #expect(text.contains("# TYPE live gauge\nlive 7\n"))
    }

    @Test func aRoutesCountsByStatusRenderOnlyTheStatusesItAnswered() {
        let registry = MetricsRegistry()
        let counter = registry.counter("http_requests_total", help: "Requests.", labelNames: ["route", "status"])
        let route = RouteStatusCounter(counter, route: "/api/pages/{unit}")
        for status in [200, 200, 404, 429, 418] { route.count(status) }
        let text = registry.render()
        #expect(text.contains("http_requests_total{route=\"/api/pages/{unit}\",status=\"200\"} 2\n"))
        #expect(text.contains("http_requests_total{route=\"/api/pages/{unit}\",status=\"404\"} 1\n"))
        #expect(text.contains("http_requests_total{route=\"/api/pages/{unit}\",status=\"429\"} 1\n"))
        // A status the server never answers with is counted all the same, the slower way.
        #expect(text.contains("http_requests_total{route=\"/api/pages/{unit}\",status=\"418\"} 1\n"))
        #expect(!text.contains("status=\"503\""))
        #expect(counter.value(["/api/pages/{unit}", "200"]) == 2)
    }

    @Test func observationsFromManyThreadsAtOnceAreAllCounted() async {
        let registry = MetricsRegistry()
        let histogram = registry.histogram("latency_seconds", help: "Latency.", buckets: [0.1, 1])
        let series = histogram.series()
        let counter = registry.counter("requests_total", help: "Requests.", labelNames: [])
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<8 {
                group.addTask {
                    for step in 0..<5_000 {
                        series.observe(step % 2 == 0 ? 0.0625 : (thread == 0 ? 5 : 0.5))
                        counter.increment()
                    }
                }
            }
        }
        #expect(histogram.count() == 40_000)
        let text = registry.render()
        #expect(text.contains("latency_seconds_bucket{le=\"0.1\"} 20000\n"))
        #expect(text.contains("latency_seconds_bucket{le=\"1\"} 37500\n"))
        #expect(text.contains("latency_seconds_bucket{le=\"+Inf\"} 40000\n"))
        #expect(text.contains("latency_seconds_count 40000\n"))
        // 20,000 × 0.0625 + 17,500 × 0.5 + 2,500 × 5 = 22,500 (each exact in binary, so no rounding).
        #expect(text.contains("latency_seconds_sum 22500\n"))
        #expect(text.contains("requests_total 40000\n"))
    }
}

@Suite struct SessionIdentifierTests {
    @Test func idsAreLongRandomAndWellFormed() {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let identifier = SessionIdentifier.generate()
            #expect(SessionIdentifier.isWellFormed(identifier))
            seen.insert(identifier)
        }
        #expect(seen.count == 1000)
        #expect(!SessionIdentifier.isWellFormed("short"))
        #expect(!SessionIdentifier.isWellFormed(String(repeating: "+", count: 24)))
        #expect(SessionIdentifier.redacted("abcdefghijklmnopqrstuvwx") == "abcdef…")
    }
}

@Suite struct RateLimiterTests {
    @Test func admitsUpToTheLimitPerAddress() throws {
        let limiter = NewSessionRateLimiter(limitPerMinute: 2)
        #expect(limiter.admit("a") == nil)
        #expect(limiter.admit("a") == nil)
        let retry = try #require(limiter.admit("a"))
        #expect((1...60).contains(retry))
        #expect(limiter.admit("b") == nil)
        #expect(NewSessionRateLimiter(limitPerMinute: 0).admit("a") == nil)
    }
}
