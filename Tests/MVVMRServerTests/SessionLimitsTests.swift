import JSONPatch
import MVVMR
import MicroHTTP
import Testing

@testable import MVVMRServer

/// An echo page: the `text` action's value is shown at `/text`, so a client's value becomes view bytes,
/// patch bytes and event-log bytes, as the demo's login field does.
struct EchoInput {
    let text: Signal<String>
}

struct EchoOutput {
    let text: Driver<String>
}

struct EchoView: View {
    func input(from actions: Actions<NamedAction>) -> EchoInput {
        EchoInput(text: actions.signal("text", of: String.self))
    }

    func bind(_ output: EchoOutput, to page: Page) {
        page.bind(output.text, at: "/text")
    }
}

final class EchoViewModel: ViewModel {
    init(context: UnitContext) throws {}

    func transform(_ input: EchoInput) -> EchoOutput {
        EchoOutput(text: input.text.asDriver(startingWith: ""))
    }
}

extension UnitCase {
    /// The echo page (also the spoiled-session tests' page).
    static let echo = UnitCase("echo", view: EchoView.self, viewModel: EchoViewModel.self)
}

private func echoSession(_ limits: SessionLimits) throws -> ServerSession {
    let session = ServerSession(
        identifier: SessionIdentifier.generate(), registry: UnitRegistry(root: .echo, units: [.echo]),
        services: Services(),
        limits: limits)
    try session.pages.start()
    return session
}

@Suite struct EventLogByteLimitTests {
    @Test func dropsTheOldestEventsOnceTheirBytesPassTheLimit() {
        var log = EventLog()
        let bounds = EventLog.Bounds(count: 100, bytes: 10)
        for sequence in 1...5 { log.append(sequence: sequence, frame: [UInt8](repeating: UInt8(sequence), count: 4), within: bounds) }
        // 5 frames of 4 bytes against 10: only the last two fit.
        #expect(log.count == 2)
        #expect(log.byteCount == 8)
        #expect(log.frames(after: 3) == [[4, 4, 4, 4], [5, 5, 5, 5]])
        #expect(log.frames(after: 2) == nil)
    }

    @Test func anEventLargerThanTheLimitIsNotKeptAndReplayFallsBackToSnapshots() {
        var log = EventLog()
        let bounds = EventLog.Bounds(count: 100, bytes: 10)
        log.append(sequence: 1, frame: [1], within: bounds)
        log.append(sequence: 2, frame: [UInt8](repeating: 2, count: 11), within: bounds)
        #expect(log.count == 0)
        #expect(log.byteCount == 0)
        #expect(log.frames(after: 1) == nil)
        #expect(log.frames(after: 2) == [])
        log.append(sequence: 3, frame: [3], within: bounds)
        #expect(log.frames(after: 2) == [[3]])
    }

    @Test func theSessionsLogStaysWithinItsBytesWhateverTheValues() throws {
        var limits = SessionLimits()
        limits.eventLogBytes = 8192
        limits.sessionBytes = 1 << 30
        let session = try echoSession(limits)
        for index in 0..<100 {
            try session.pages.perform(
                "text", value: .string(String(repeating: "x", count: 1000) + String(index)), on: "echo")
        }
        let (count, bytes) = session.streamState.withLock { ($0.log.count, $0.log.byteCount) }
        #expect(bytes <= 8192)
        #expect(bytes > 8192 - 1200)
        #expect(count < 10)
    }
}

@Suite struct PageHistoryLimitTests {
    @Test func aPageKeepsPatchesWithinItsBytesAndAClientFurtherBehindGetsASnapshot() throws {
        var limits = SessionLimits()
        limits.pageHistoryBytes = 4096
        let session = try echoSession(limits)
        var rev = 0
        for index in 0..<10 {
            rev = try session.pages.perform(
                "text", value: .string(String(repeating: "h", count: 1000) + String(index)), on: "echo"
            ).rev
        }
        // Two patches of about 1 KB are still kept: a client two revisions behind catches up with a patch.
        let near = try session.pages.perform("text", value: "a", on: "echo", clientRevision: rev - 2)
        #expect(near.patch != nil && near.snapshot == nil)
        // Ten are not (the count alone, 64, would keep them): a client that far behind gets the page.
        let far = try session.pages.perform("text", value: "b", on: "echo", clientRevision: rev - 9)
        #expect(far.patch == nil && far.snapshot != nil)
        #expect(session.pages.pageByteCount <= 4096 + 64)
    }
}

@Suite struct IdempotencyCacheLimitTests {
    @Test func refusesANewKeyWhenFullOfLiveEntriesAndKeepsThem() {
        var cache = IdempotencyCache(retention: .seconds(600), capacity: 100, byteLimit: 100)
        let now = ContinuousClock.now
        #expect(cache.admit(key: "a", now: now) == .admitted)
        cache.store(
            key: "a", unit: "u", request: "a", status: 200, body: [UInt8](repeating: 0, count: 1),
            now: now)
        #expect(cache.byteCount == 50)
        #expect(cache.admit(key: "b", now: now) == .admitted)
        cache.store(
            key: "b", unit: "u", request: "b", status: 200, body: [UInt8](repeating: 0, count: 1),
            now: now)
        #expect(cache.byteCount == 100)
        // Full: a third key is refused, with the time until the oldest entry expires; both entries still replay.
        #expect(cache.admit(key: "c", now: now + .seconds(100)) == .full(retryAfterSeconds: 501))
        #expect(!cache.lookup(key: "a", unit: "u", request: "a").isMiss)
        #expect(!cache.lookup(key: "b", unit: "u", request: "b").isMiss)
        // Once the retention has passed, the expired entries make room.
        #expect(cache.admit(key: "c", now: now + .seconds(600)) == .admitted)
        #expect(cache.byteCount == 0)
    }

    @Test func anEntryHoldsItsKeyAndResponseButOnlyADigestOfTheRequest() {
        // A body padded with members the server never reads is not kept: only its hash is.
        var cache = IdempotencyCache()
        let padded: JSONValue = ["action": "a", "pad": .array(Array(repeating: .int(0), count: 30_000))]
        cache.store(key: "key", unit: "u", request: padded, status: 200, body: [1, 2, 3], now: .now)
        #expect(cache.byteCount == 3 + IdempotencyCache.entryOverheadBytes + 3)
        #expect(!cache.lookup(key: "key", unit: "u", request: padded).isMiss)
        #expect(!cache.lookup(key: "key", unit: "u", request: padded).isConflict)
        #expect(cache.lookup(key: "key", unit: "u", request: ["action": "a"]).isConflict)
    }

    @Test func refusesANewKeyBeyondTheKeyCount() {
        var cache = IdempotencyCache(retention: .seconds(600), capacity: 2, byteLimit: 1 << 20)
        let now = ContinuousClock.now
        for key in ["a", "b"] {
            #expect(cache.admit(key: key, now: now) == .admitted)
            cache.store(key: key, unit: "u", request: nil, status: 200, body: [], now: now)
        }
        #expect(cache.admit(key: "c", now: now) == .full(retryAfterSeconds: 601))
        #expect(cache.count == 2)
    }
}

@Suite struct SessionByteLimitTests {
    @Test func refusesGrowthOnceTheViewsHoldTheLimit() throws {
        var limits = SessionLimits()
        limits.sessionBytes = 20_000
        limits.eventLogBytes = 1024
        let session = try echoSession(limits)
        try session.requireRoomToGrow()
        // The view holds one value at a time: replacing it keeps the session small.
        for _ in 0..<50 {
            try session.pages.perform("text", value: .string(String(repeating: "a", count: 5000)), on: "echo")
        }
        try session.requireRoomToGrow()
        try session.pages.perform("text", value: .string(String(repeating: "b", count: 25_000)), on: "echo")
        #expect(session.heldBytes() >= 25_000)
        #expect(throws: ProtocolError.sessionTooLarge(limit: 20_000)) { try session.requireRoomToGrow() }
    }

    @Test func expiredIdempotentResponsesMakeRoomBeforeAnActionIsRefused() throws {
        var limits = SessionLimits()
        limits.sessionBytes = 8192
        limits.idempotencyRetention = .seconds(10)
        let session = try echoSession(limits)
        session.idempotency.withLock { cache in
            cache.store(
                key: "old", unit: "echo", request: nil, status: 200,
                body: [UInt8](repeating: 0, count: 9000),
                now: .now - .seconds(11))
            session.noteIdempotencyBytes(cache.byteCount)
        }
        #expect(session.heldBytes() > 9000)
        // A caller that holds the cache's lock does not drop anything here: refused.
        #expect(throws: ProtocolError.sessionTooLarge(limit: 8192)) {
            try session.requireRoomToGrow(droppingExpiredResponses: false)
        }
        try session.requireRoomToGrow()
        #expect(session.idempotency.withLock { $0.count } == 0)
        #expect(session.heldBytes() < 8192)
    }

    @Test func countsTheViewsMeasuredAndThePatchesSince() throws {
        let session = try echoSession(SessionLimits())
        let empty = session.heldBytes()
        #expect(empty == session.pages.pageByteCount + session.streamState.withLock { $0.log.byteCount })
        try session.pages.perform("text", value: .string(String(repeating: "z", count: 3000)), on: "echo")
        // Not measured again yet (under the growth threshold): the estimate is at least the real size.
        #expect(session.heldBytes() >= session.pages.pageByteCount + session.streamState.withLock { $0.log.byteCount })
    }

    @Test func anEventThatMayBindOrReleasePagesMakesTheNextCountMeasureThem() throws {
        let session = try echoSession(SessionLimits())
        _ = session.heldBytes()
        try session.pages.perform("text", value: .string(String(repeating: "z", count: 3000)), on: "echo")
        let exact = { session.pages.pageByteCount + session.streamState.withLock { $0.log.byteCount } }
        // Estimated: the patch counts twice (in the view and in the page's history), so more than the pages hold.
        #expect(session.heldBytes() > exact())
        // A snapshot (as a navigation) may bind or release pages: the next count measures them.
        let view = JSONValue.object(["text": .string("")])
        session.publish([SessionEvent(sequence: 99, kind: .snapshot(PageSnapshot(unit: "echo", rev: 9, view: view, actions: [])))])
        #expect(session.heldBytes() == exact())
    }
}

@Suite struct StreamLimitTests {
    @Test func aSessionRefusesAStreamBeyondItsLimit() throws {
        var limits = SessionLimits()
        limits.streamsPerSession = 2
        let session = try echoSession(limits)
        let streams = (0..<3).map { _ in EventStream(bufferLimit: 1 << 16) }
        #expect(session.attach(streams[0], lastEventID: nil) == .attached)
        #expect(session.attach(streams[1], lastEventID: 0) == .attached)
        #expect(session.attach(streams[2], lastEventID: nil) == .tooManyStreams)
        #expect(session.openStreamCount == 2)
        session.detach(streams[0])
        #expect(session.attach(streams[2], lastEventID: nil) == .attached)
    }

    @Test func anAddressHoldsAtMostItsLimitOfStreams() {
        let streams = OpenStreamsPerAddress(limit: 2)
        #expect(streams.acquire("10.0.0.1"))
        #expect(streams.acquire("10.0.0.1"))
        #expect(!streams.acquire("10.0.0.1"))
        #expect(streams.acquire("10.0.0.2"))
        streams.release("10.0.0.1")
        #expect(streams.openStreams(of: "10.0.0.1") == 1)
        #expect(streams.acquire("10.0.0.1"))
        streams.release("10.0.0.2")
        #expect(streams.openStreams(of: "10.0.0.2") == 0)
    }
}

@Suite struct SessionLimitSettingsTests {
    @Test func theBoundsAreSettingsWithTheAgreedDefaults() throws {
        let defaults = try ServerConfiguration.parse(arguments: [], environment: [:])
        #expect(defaults.maxIdempotencyKeyBytes == 255)
        #expect(defaults.maxIdempotencyBytesPerSession == 262_144)
        #expect(defaults.maxEventLogBytes == 262_144)
        #expect(defaults.maxActionValueBytes == 16_384)
        #expect(defaults.maxSessionBytes == 1_048_576)
        #expect(defaults.maxStreamsPerSession == 8)
        #expect(defaults.maxStreamsPerIP == 64)
        let configured = try ServerConfiguration.parse(
            arguments: ["--max-action-value-bytes", "100", "--max-streams-per-ip=3"],
            environment: ["MAX_SESSION_BYTES": "65536", "MAX_IDEMPOTENCY_KEY_BYTES": "32"])
        #expect(configured.maxActionValueBytes == 100)
        #expect(configured.maxStreamsPerIP == 3)
        #expect(configured.maxSessionBytes == 65536)
        let limits = SessionLimits(configured)
        #expect(limits.actionValueBytes == 100 && limits.sessionBytes == 65536 && limits.idempotencyKeyBytes == 32)
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.parse(arguments: ["--max-streams-per-session", "0"], environment: [:])
        }
    }
}

/// Run again under ThreadSanitizer by scripts/test.sh (the suite's name ends in `ConcurrencyTests`).
@Suite struct SessionBoundsConcurrencyTests {
    @Test func actionsStreamsAndTheByteCountRaceWithoutLosingCount() async throws {
        var limits = SessionLimits()
        limits.streamsPerSession = 4
        let session = try echoSession(limits)
        let addresses = OpenStreamsPerAddress(limit: 3)
        let startSequence = session.pages.sequence
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<200 {
                        _ = try? session.pages.perform("text", value: .string("\(worker)-\(index)"), on: "echo")
                        _ = session.heldBytes()
                    }
                }
                group.addTask {
                    for _ in 0..<200 {
                        let stream = EventStream(bufferLimit: 1 << 16)
                        guard addresses.acquire("10.0.0.1") else { continue }
                        if session.attach(stream, lastEventID: 0) == .attached { session.detach(stream) }
                        addresses.release("10.0.0.1")
                    }
                }
            }
        }
        #expect(addresses.openStreams(of: "10.0.0.1") == 0)
        #expect(session.openStreamCount == 0)
        #expect(session.pages.sequence == startSequence + 800)
        let (logged, logBytes) = session.streamState.withLock { ($0.log.count, $0.log.byteCount) }
        #expect(logged == 256)
        #expect(logBytes > 0 && logBytes <= limits.eventLogBytes)
    }
}
