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
}
