import JSONPatch
import Locking
import Testing

@testable import MVVMRServer

@Suite struct SessionTableTests {
    @Test func evictsTheLeastRecentlyUsedOneRequestSessionFirst() {
        let table = SessionTable<String>(capacity: 3)
        #expect(table.insert("returning", identifier: "r").inserted)
        #expect(table.touch("r") == "returning")
        _ = table.insert("old drive-by", identifier: "a")
        _ = table.insert("new drive-by", identifier: "b")
        let result = table.insert("newest", identifier: "c")
        #expect(result.inserted)
        #expect(result.evicted == "old drive-by")
        #expect(table.peek("a") == nil)
        #expect(table.count == 3)
    }

    @Test func returningSessionsGoOnlyWhenNoDriveByIsLeft() {
        let table = SessionTable<String>(capacity: 2)
        _ = table.insert("one", identifier: "1")
        _ = table.insert("two", identifier: "2")
        _ = table.touch("1")
        _ = table.touch("2")
        _ = table.touch("1")
        let result = table.insert("three", identifier: "3")
        #expect(result.evicted == "two")
    }

    @Test func sessionsWithOpenStreamsAreNeitherEvictedNorExpired() {
        let table = SessionTable<String>(capacity: 1)
        _ = table.insert("streaming", identifier: "s")
        table.streamOpened("s")
        let refused = table.insert("other", identifier: "o")
        #expect(!refused.inserted)
        #expect(refused.evicted == nil)
        #expect(table.removeExpired(timeToLive: .zero).isEmpty)
        table.streamClosed("s")
        #expect(table.removeExpired(timeToLive: .zero) == ["streaming"])
        #expect(table.count == 0)
    }

    @Test func expiryTakesOnlySessionsIdleForTheTimeToLive() {
        let table = SessionTable<String>(capacity: 10)
        _ = table.insert("a", identifier: "a")
        #expect(table.removeExpired(timeToLive: .seconds(60)).isEmpty)
        #expect(table.removeExpired(timeToLive: .zero) == ["a"])
    }

    @Test func idleSessionsAreHandedOutOnceUntilTheirNextRequestStreamsOpenOrNot() {
        let table = SessionTable<String>(capacity: 10)
        _ = table.insert("quiet", identifier: "q")
        _ = table.insert("streaming", identifier: "s")
        table.streamOpened("s")
        #expect(table.takeIdle(for: .seconds(60)).isEmpty)
        #expect(Set(table.takeIdle(for: .zero)) == ["quiet", "streaming"])
        #expect(table.takeIdle(for: .zero).isEmpty)
        _ = table.touch("q")
        #expect(table.takeIdle(for: .zero) == ["quiet"])
        table.retryIdle("s")
        #expect(table.takeIdle(for: .zero) == ["streaming"])
        #expect(table.count == 2)
    }

    @Test func removeForgetsTheSession() {
        let table = SessionTable<String>(capacity: 2)
        _ = table.insert("a", identifier: "a")
        #expect(table.remove("a") == "a")
        #expect(table.remove("a") == nil)
        #expect(table.touch("a") == nil)
    }
}

@Suite struct EventLogTests {
    @Test func replaysWhatFollowsAnIdAndRefusesWhatItNoLongerHolds() {
        var log = EventLog()
        let bounds = EventLog.Bounds(count: 3)
        for sequence in 1...5 { log.append(sequence: sequence, frame: [UInt8(sequence)], within: bounds) }
        #expect(log.newestSequence == 5)
        #expect(log.frames(after: 3) == [[4], [5]])
        #expect(log.frames(after: 2) == [[3], [4], [5]])
        #expect(log.frames(after: 5) == [])
        #expect(log.frames(after: 1) == nil)
    }
}

@Suite struct IdempotencyCacheTests {
    @Test func replaysTheSameRequestAndRefusesAnotherBody() {
        var cache = IdempotencyCache()
        #expect(cache.lookup(key: "k", unit: "u", request: ["action": "a"]).isMiss)
        cache.store(key: "k", unit: "u", request: ["action": "a", "value": 1], status: 200, body: [1, 2], now: .now)
        if case .replay(let status, let body, _) = cache.lookup(key: "k", unit: "u", request: ["value": 1, "action": "a"]) {
            #expect(status == 200 && body == [1, 2])
        } else {
            Issue.record("expected a replay")
        }
        #expect(cache.lookup(key: "k", unit: "u", request: ["action": "b"]).isConflict)
        #expect(cache.lookup(key: "k", unit: "other", request: ["action": "a", "value": 1]).isConflict)
    }

    @Test func forgetsKeysOlderThanTheRetention() {
        var cache = IdempotencyCache(retention: .seconds(1), capacity: 10)
        let start = ContinuousClock.now
        cache.store(key: "old", unit: "u", request: nil, status: 200, body: [], now: start)
        cache.store(key: "new", unit: "u", request: nil, status: 200, body: [], now: start + .seconds(2))
        #expect(cache.lookup(key: "old", unit: "u", request: nil).isMiss)
        #expect(!cache.lookup(key: "new", unit: "u", request: nil).isMiss)
    }
}

extension IdempotencyCache.Lookup {
    var isMiss: Bool {
        if case .miss = self { return true }
        return false
    }

    var isConflict: Bool {
        if case .conflict = self { return true }
        return false
    }
}

extension IdempotencyCache {
    /// The lookup of a request given as its body (the server digests it the same way).
    func lookup(key: String, unit: String, request: JSONValue) -> Lookup {
        lookup(key: key, unit: unit, requestDigest: Self.digest(of: request))
    }

    /// Stores an answer for a request given as its body, made by no logged input.
    mutating func store(key: String, unit: String, request: JSONValue, status: Int, body: [UInt8], now: ContinuousClock.Instant) {
        store(
            key: key, unit: unit, requestDigest: Self.digest(of: request), status: status, body: body, inputNumber: nil,
            now: now)
    }
}

/// The table's shards: each id in one shard, the capacity held across all of them, and eviction and expiry by the
/// whole table's order, whichever shards the sessions fall in.
@Suite struct ShardedSessionTableTests {
    /// Ids that differ in their first bytes, so that they fall in different shards.
    private static func identifier(_ number: Int) -> String { "\(number)-session-\(number * 7_919)" }

    @Test func issuedIdsSpreadEvenlyOverTheShards() {
        var perShard = [Int](repeating: 0, count: SessionTable<Int>.shardCount)
        for _ in 0..<16_000 { perShard[SessionTable<Int>.shardIndex(of: SessionIdentifier.generate())] += 1 }
        // 1,000 expected in each; a shard off by a fifth would be far outside chance.
        #expect(perShard.allSatisfy { (800...1_200).contains($0) }, "\(perShard)")
        // The ids these tests use fall in many shards too.
        #expect(Set((0..<40).map { SessionTable<Int>.shardIndex(of: Self.identifier($0)) }).count >= 10)
    }

    @Test func evictionTakesTheOldestIdleSessionOfAllShards() {
        let table = SessionTable<Int>(capacity: 40)
        for number in 0..<40 { #expect(table.insert(number, identifier: Self.identifier(number)).inserted) }
        // Every session but 17 came back; 17 is the only drive-by, so it goes first, then the returning ones oldest
        // first (0, then 1, ...), whichever shards they are in.
        for number in 0..<40 where number != 17 { #expect(table.touch(Self.identifier(number)) == number) }
        #expect(table.insert(100, identifier: Self.identifier(100)).evicted == 17)
        #expect(table.insert(101, identifier: Self.identifier(101)).evicted == 100)
        _ = table.touch(Self.identifier(101))
        #expect(table.insert(102, identifier: Self.identifier(102)).evicted == 0)
        #expect(table.insert(103, identifier: Self.identifier(103)).evicted == 102)
        #expect(table.count == 40)
    }

    @Test func aFullTableWhoseSessionsAllStreamRefusesAndChangesNothing() {
        let table = SessionTable<Int>(capacity: 20)
        for number in 0..<20 {
            _ = table.insert(number, identifier: Self.identifier(number))
            table.streamOpened(Self.identifier(number))
        }
        let refused = table.insert(99, identifier: Self.identifier(99))
        #expect(!refused.inserted && refused.evicted == nil)
        #expect(table.count == 20)
        #expect(table.peek(Self.identifier(99)) == nil)
        #expect(Set(table.identifiersWithOpenStreams()) == Set((0..<20).map(Self.identifier)))
        table.streamClosed(Self.identifier(5))
        #expect(table.insert(99, identifier: Self.identifier(99)).evicted == 5)
    }

    @Test func insertingAnIdAgainReplacesItsSessionAndKeepsTheCount() {
        let table = SessionTable<String>(capacity: 5)
        _ = table.insert("first", identifier: "same")
        _ = table.insert("second", identifier: "same")
        #expect(table.count == 1)
        #expect(table.peek("same") == "second")
        #expect(table.removeExpired(timeToLive: .zero) == ["second"])
        #expect(table.count == 0)
    }

    @Test func manyThreadsNeverPassTheCapacityAndTheCountStaysTrue() async {
        let capacity = 300
        let table = SessionTable<Int>(capacity: capacity)
        let overCapacity = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<8 {
                group.addTask {
                    var generator = SystemRandomNumberGenerator()
                    for step in 0..<4_000 {
                        let number = thread * 1_000_000 + step
                        switch Int.random(in: 0..<10, using: &generator) {
                        case 0..<5: _ = table.insert(number, identifier: Self.identifier(number))
                        case 5..<8: _ = table.touch(Self.identifier(number - Int.random(in: 0..<50, using: &generator)))
                        case 8: _ = table.remove(Self.identifier(number - Int.random(in: 0..<50, using: &generator)))
                        default: _ = table.removeExpired(timeToLive: .milliseconds(5))
                        }
                        if table.count > capacity { overCapacity.withLock { $0 += 1 } }
                    }
                }
            }
        }
        #expect(overCapacity.withLock { $0 } == 0)
        #expect(table.count == table.allEntries().count)
        #expect(table.count <= capacity)
        let remaining = table.allEntries().count
        #expect(table.removeExpired(timeToLive: .zero).count == remaining)
        #expect(table.count == 0 && table.allEntries().isEmpty)
    }
}
