import Testing

@testable import MVVMRServer

@Suite struct OriginPolicyHostTests {
    @Test func withPublicOriginTheRequestHostIsNotTheServersOwnOrigin() {
        // DNS rebinding: a page at http://rebound.example:8080 whose name now points at the server sends
        // `Host: rebound.example:8080` and `Origin: http://rebound.example:8080`; both are the attacker's.
        let policy = OriginPolicy(publicOrigin: "https://app.example.com", allowedOrigins: [])
        #expect(
            !policy.allows(
                origin: "http://rebound.example:8080", requestScheme: "http", requestHost: "rebound.example:8080"))
    }

    @Test func withPublicOriginThatOriginAndTheAllowedOnesStillPass() {
        let policy = OriginPolicy(
            publicOrigin: "https://app.example.com", allowedOrigins: ["https://admin.example.com"])
        #expect(policy.allows(origin: "https://app.example.com", requestScheme: "http", requestHost: "10.0.0.5:8080"))
        #expect(policy.allows(origin: "https://APP.example.com:443/", requestScheme: "http", requestHost: nil))
        #expect(policy.allows(origin: "https://admin.example.com", requestScheme: "http", requestHost: "10.0.0.5:8080"))
        #expect(policy.allows(origin: nil, requestScheme: "http", requestHost: "anything"))
        #expect(!policy.allows(origin: "https://evil.example", requestScheme: "https", requestHost: "app.example.com"))
    }

    @Test func withoutPublicOriginTheRequestHostStandsForTheServersOrigin() {
        let policy = OriginPolicy(publicOrigin: nil, allowedOrigins: [])
        #expect(policy.allows(origin: "http://127.0.0.1:8080", requestScheme: "http", requestHost: "127.0.0.1:8080"))
        #expect(!policy.allows(origin: "http://evil.example", requestScheme: "http", requestHost: "127.0.0.1:8080"))
        #expect(policy.allows(origin: "http://x", requestScheme: "http", requestHost: "x:80"))
        #expect(!policy.allows(origin: "https://x:8080", requestScheme: "http", requestHost: "x:8080"))
    }
}
