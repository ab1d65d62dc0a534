import Foundation

/// How a ``PageClient`` retries, reconnects and times out. All durations are in seconds.
///
/// ```swift
/// var configuration = PageClientConfiguration()
/// configuration.maxActionAttempts = 5
/// let client = PageClient(baseURL: url, configuration: configuration)
/// ```
public struct PageClientConfiguration: Sendable {
    /// How many times one request (an action, a page `GET`, a new session) is tried in all before the
    /// client gives up: network errors and `503` are retried, never `4xx`. At least 1.
    public var maxActionAttempts = 4
    /// The delay before the first retry; it doubles with every further attempt (with ±20 % jitter).
    public var retryBaseDelay: TimeInterval = 0.2
    /// The longest delay between two attempts computed by backoff.
    public var maxRetryDelay: TimeInterval = 5
    /// The longest `Retry-After` the client waits for; a `503` asking for more is returned as an error.
    public var maxRetryAfter: TimeInterval = 30
    /// The delay before reconnecting the event stream when the server gave no `retry:` field; it doubles
    /// with every failed attempt in a row.
    public var reconnectDelay: TimeInterval = 1
    /// The longest delay before reconnecting the event stream (it also caps the server's `retry:`).
    public var maxReconnectDelay: TimeInterval = 10
    /// The time a request may take before it counts as a network error.
    public var requestTimeout: TimeInterval = 30
    /// The longest silence on the event stream before it counts as dropped (the server pings at least
    /// every 15 s).
    public var eventStreamIdleTimeout: TimeInterval = 45
    /// Whether the client opens a new session at the page it was on when the server no longer knows its
    /// session (`404 unknown_session`, or an `expired` event).
    public var recoversSessions = true
    /// Headers added to every request (an `Authorization`, a `User-Agent`).
    public var additionalHeaders: [String: String] = [:]

    /// The defaults: 4 attempts from 0.2 s, reconnects from 1 s up to 10 s, 30 s request timeout.
    public init() {}
}
