import Testing

@testable import MVVMRServer

@Suite struct SessionStoreTests {
    @Test func evictsTheLeastRecentlyUsedOneRequestSessionFirst() {
        let store = SessionStore<String>(capacity: 3)
        #expect(store.insert("returning", identifier: "r").inserted)
        #expect(store.touch("r") == "returning")
        _ = store.insert("old drive-by", identifier: "a")
        _ = store.insert("new drive-by", identifier: "b")
        let result = store.insert("newest", identifier: "c")
        #expect(result.inserted)
        #expect(result.evicted == "old drive-by")
        #expect(store.peek("a") == nil)
        #expect(store.count == 3)
    }

    @Test func returningSessionsGoOnlyWhenNoDriveByIsLeft() {
        let store = SessionStore<String>(capacity: 2)
        _ = store.insert("one", identifier: "1")
        _ = store.insert("two", identifier: "2")
        _ = store.touch("1")
        _ = store.touch("2")
        _ = store.touch("1")
        let result = store.insert("three", identifier: "3")
        #expect(result.evicted == "two")
    }

    @Test func sessionsWithOpenStreamsAreNeitherEvictedNorExpired() {
        let store = SessionStore<String>(capacity: 1)
        _ = store.insert("streaming", identifier: "s")
        store.streamOpened("s")
        let refused = store.insert("other", identifier: "o")
        #expect(!refused.inserted)
        #expect(refused.evicted == nil)
        #expect(store.removeExpired(timeToLive: .zero).isEmpty)
        store.streamClosed("s")
        #expect(store.removeExpired(timeToLive: .zero) == ["streaming"])
        #expect(store.count == 0)
    }

    @Test func expiryTakesOnlySessionsIdleForTheTimeToLive() {
        let store = SessionStore<String>(capacity: 10)
        _ = store.insert("a", identifier: "a")
        #expect(store.removeExpired(timeToLive: .seconds(60)).isEmpty)
        #expect(store.removeExpired(timeToLive: .zero) == ["a"])
    }

    @Test func removeForgetsTheSession() {
        let store = SessionStore<String>(capacity: 2)
        _ = store.insert("a", identifier: "a")
        #expect(store.remove("a") == "a")
        #expect(store.remove("a") == nil)
        #expect(store.touch("a") == nil)
    }
}

@Suite struct EventLogTests {
    @Test func replaysWhatFollowsAnIdAndRefusesWhatItNoLongerHolds() {
        var log = EventLog(capacity: 3)
        for sequence in 1...5 { log.append(sequence: sequence, frame: [UInt8(sequence)]) }
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
        if case .replay(let status, let body) = cache.lookup(key: "k", unit: "u", request: ["value": 1, "action": "a"]) {
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
