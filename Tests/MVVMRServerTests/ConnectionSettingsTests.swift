import Testing

@testable import MVVMRServer

/// The connection settings of issue 11: safe by default, each readable from its variable.
@Suite struct ConnectionSettingsTests {
    @Test func oneAddressIsLimitedAndRequestsHaveDeadlinesByDefault() {
        let defaults = ServerConfiguration()
        #expect(defaults.maxConnectionsPerIP == 128)
        #expect(defaults.maxConnections == 10_000)
        #expect(defaults.requestHeaderTimeoutSeconds == 10)
        #expect(defaults.requestBodyTimeoutSeconds == 30)
        #expect(defaults.connectionTimeoutSeconds == 30)
    }

    @Test func requestDeadlinesAreReadFromTheEnvironmentAndZeroDisablesThem() throws {
        let configuration = try ServerConfiguration.parse(
            arguments: ["--request-body-timeout-seconds", "0"],
            environment: ["REQUEST_HEADER_TIMEOUT_SECONDS": "3", "REQUEST_BODY_TIMEOUT_SECONDS": "7"])
        #expect(configuration.requestHeaderTimeoutSeconds == 3)
        #expect(configuration.requestBodyTimeoutSeconds == 0)
        #expect(ServerConfiguration.helpText.contains("REQUEST_HEADER_TIMEOUT_SECONDS"))
    }

    @Test(arguments: ["-1", "soon", "86401"])
    func aBadRequestDeadlineIsAClearError(value: String) {
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.parse(arguments: [], environment: ["REQUEST_HEADER_TIMEOUT_SECONDS": value])
        }
    }

    @Test func behindATrustedProxyThePerAddressConnectionLimitIsOffUnlessGiven() throws {
        let behindProxy = try ServerConfiguration.parse(arguments: [], environment: ["TRUST_FORWARDED_HEADERS": "true"])
        #expect(behindProxy.maxConnectionsPerIP == 0)
        let given = try ServerConfiguration.parse(
            arguments: ["--max-connections-per-ip", "500"], environment: ["TRUST_FORWARDED_HEADERS": "true"])
        #expect(given.maxConnectionsPerIP == 500)
        let givenInEnvironment = try ServerConfiguration.parse(
            arguments: [], environment: ["TRUST_FORWARDED_HEADERS": "true", "MAX_CONNECTIONS_PER_IP": "128"])
        #expect(givenInEnvironment.maxConnectionsPerIP == 128)
        let direct = try ServerConfiguration.parse(arguments: [], environment: [:])
        #expect(direct.maxConnectionsPerIP == 128)
    }
}

/// The start-up line's URL: one a person can open.
@Suite struct BrowsableURLTests {
    @Test(arguments: [
        ("0.0.0.0", "http://localhost:8080/"), ("::", "http://localhost:8080/"), ("", "http://localhost:8080/"),
        ("127.0.0.1", "http://127.0.0.1:8080/"), ("::1", "http://[::1]:8080/"), ("[::1]", "http://[::1]:8080/"),
        ("example.test", "http://example.test:8080/"),
    ])
    func anAddressBecomesAURLToOpen(host: String, url: String) {
        #expect(ServerConfiguration.browsableURL(host: host, port: 8080) == url)
    }
}
