import Foundation
import Locking
import Testing

@testable import MVVMRServer

/// What the JetStream store does beyond the shared suite: the fence between nodes, restoring on another node, outages.
/// One test at a time: several start nats-servers of their own, which would otherwise load the machine beside the
/// timing-sensitive tests of other suites all at once.
@Suite(.serialized) struct NATSSessionStoreTests {
    /// Runs `body` with two nodes' stores on one NATS server (one stream, one bucket), closed after.
    private func withTwoNodes(_ body: (NATSSessionStore, NATSSessionStore) throws -> Void) throws {
        let server = try #require(NATSTestServer.shared)
        let settings = natsSettings(server)
        let first = try NATSSessionStore(settings)
        let second = try NATSSessionStore(settings)
        defer {
            first.close()
            second.close()
        }
        try body(first, second)
    }

    /// A short log is read with message gets alone, a long one with an ordered consumer first: both read it whole,
    /// in order, on another node, after a snapshot too.
    @Test(arguments: [NATSSessionStore.messageGetLimit - 1, NATSSessionStore.messageGetLimit + 8])
    func aLogOfAnyLengthIsReadWholeInOrderOnAnotherNode(count: Int) throws {
        try withTwoNodes { writer, reader in
            for number in 1...count { #expect(failureKind(appendWaiting(record("long", number, bodySize: 200), to: writer)) == nil) }
            #expect(try reader.load("long") == StoredSession(snapshot: nil, records: (1...count).map { record("long", $0, bodySize: 200) }))
            try writer.saveSnapshot(StoredSnapshot(number: 3, body: Array("{\"s\":3}".utf8)), of: "long")
            let loaded = try #require(try reader.load("long"))
            #expect(loaded.snapshot == StoredSnapshot(number: 3, body: Array("{\"s\":3}".utf8)))
            #expect(loaded.records.map(\.number) == Array(4...count))
        }
    }

    /// A restore claims the session as it loaded it: refused when another node wrote since the load, and once
    /// written, every other node's write (or claim) from an older read is refused, while loads read past it.
    @Test func aClaimIsRefusedAfterAnotherNodesWriteAndThenFencesEveryOtherNodeOut() throws {
        try withTwoNodes { first, second in
            for number in 1...3 { #expect(failureKind(appendWaiting(record("c", number), to: first)) == nil) }
            let stale = try #require(try second.load("c"))
            #expect(failureKind(appendWaiting(record("c", 4), to: first)) == nil)
            #expect(try second.claim("c", asLoaded: stale) == nil, "the first node wrote record 4 after the load")
            let fresh = try #require(try second.load("c"))
            #expect(fresh.records.map(\.number) == [1, 2, 3, 4])
            let secondsClaim = try #require(try second.claim("c", asLoaded: fresh))
            #expect(try second.claim("c", asLoaded: fresh) == nil, "a claim is a write: a second one from the same read fails")
            #expect(
                failureKind(appendWaiting(record("c", 5), to: first)) == .outOfOrder,
                "the first node's fence names record 4's message, which is no longer the subject's last")
            #expect(
                failureKind(appendWaiting(record("c", 5), to: second)) == nil,
                "the holder writes on after its claim (having read its fence again after the refused second claim)")
            // Claims hold no record: both nodes read the same log, and the first node takes the session back.
            let taken = try #require(try first.load("c"))
            #expect(taken == StoredSession(snapshot: nil, records: (1...5).map { record("c", $0) }))
            let firstsClaim = try #require(try first.claim("c", asLoaded: taken))
            #expect(firstsClaim.order > secondsClaim.order, "the later claim has the greater order")
            #expect(firstsClaim.supersedes(secondsClaim) && !secondsClaim.supersedes(firstsClaim))
            #expect(failureKind(appendWaiting(record("c", 6), to: second)) == .outOfOrder)
            #expect(failureKind(appendWaiting(record("c", 6), to: first)) == nil)
            // A snapshot after claims purges them with the records it stands for; the log still reads whole.
            try first.saveSnapshot(StoredSnapshot(number: 6, body: Array("{\"s\":6}".utf8)), of: "c")
            let snapshotted = try #require(try second.load("c"))
            #expect(snapshotted.snapshot?.number == 6 && snapshotted.records.isEmpty)
            #expect(try second.claim("c", asLoaded: snapshotted).map(\.order) ?? 0 > firstsClaim.order)
            #expect(failureKind(appendWaiting(record("c", 7), to: second)) == nil)
            #expect(try first.load("c")?.records.map(\.number) == [7])
        }
    }

    /// A copy whose append failed (another node claimed the session) learns of it from the completion, a moment later:
    /// a record it appends meanwhile must not read the fence again and land after the other node's records, where its
    /// number may fit. Once its log is read again, the node writes on from there.
    @Test func aRecordAfterAFailedOneNeverFollowsAnotherNodesRecords() throws {
        try withTwoNodes { old, new in
            #expect(failureKind(appendWaiting(record("f", 1), to: old)) == nil)
            let loaded = try #require(try new.load("f"))
            #expect(try new.claim("f", asLoaded: loaded) != nil)
            let newSecond = StoredRecord(session: "f", number: 2, body: Array("{\"node\":\"new\"}".utf8))
            #expect(failureKind(appendWaiting(newSecond, to: new)) == nil)
            let oldSecond = StoredRecord(session: "f", number: 2, body: Array("{\"node\":\"old\"}".utf8))
            #expect(failureKind(appendWaiting(oldSecond, to: old)) == .outOfOrder, "the claim fenced the old copy out")
            #expect(
                failureKind(appendWaiting(StoredRecord(session: "f", number: 3, body: Array("{\"node\":\"old\"}".utf8)), to: old))
                    == .outOfOrder,
                "record 3 of the old copy follows its own record 2, not the new copy's")
            #expect(try new.load("f")?.records == [record("f", 1), newSecond])
            #expect(failureKind(appendWaiting(record("f", 3), to: new)) == nil)
            // Restored there (loaded and claimed), the log is what the old node goes on from.
            let reloaded = try #require(try old.load("f"))
            #expect(reloaded.records.map(\.number) == [1, 2, 3])
            #expect(try old.claim("f", asLoaded: reloaded) != nil)
            #expect(failureKind(appendWaiting(record("f", 4), to: old)) == nil)
            #expect(try new.load("f")?.records == [record("f", 1), newSecond, record("f", 3), record("f", 4)])
        }
    }

    @Test func twoNodesNeverBothAcceptARecordNumber() throws {
        try withTwoNodes { first, second in
            #expect(failureKind(appendWaiting(record("s", 1), to: first)) == nil)
            #expect(failureKind(appendWaiting(record("s", 1), to: second)) == .outOfOrder, "the session exists already")
            #expect(try second.load("s")?.records.map(\.number) == [1])
            #expect(failureKind(appendWaiting(record("s", 2), to: second)) == nil)
            #expect(
                failureKind(appendWaiting(StoredRecord(session: "s", number: 2, body: Array("{\"node\":1}".utf8)), to: first)) == .outOfOrder,
                "the first node's fence names the sequence of record 1, which is no longer the subject's last")
            #expect(try first.load("s")?.records == [record("s", 1), record("s", 2)], "the loser reads the session again")
            #expect(failureKind(appendWaiting(record("s", 3), to: first)) == nil, "and goes on from there")
            #expect(failureKind(appendWaiting(record("s", 3), to: second)) == .outOfOrder)
            // Snapshots and removals are fenced too: a node whose fence is stale writes neither.
            #expect(try second.load("s")?.lastNumber == 3)
            #expect(failureKind(appendWaiting(record("s", 4), to: first)) == nil)
            #expect(storeError { () throws(SessionStoreError) in try second.removeRecords([3], of: "s") }?.kind == .outOfOrder)
            #expect(try second.load("s")?.records.map(\.number) == [1, 2, 3, 4], "nothing was removed")
            #expect(failureKind(appendWaiting(record("s", 5), to: first)) == nil)
            #expect(
                storeError { () throws(SessionStoreError) in try second.saveSnapshot(StoredSnapshot(number: 4, body: [1]), of: "s") }?.kind
                    == .outOfOrder)
            #expect(try first.load("s") == StoredSession(snapshot: nil, records: (1...5).map { record("s", $0) }))
            // Having read it again, the second node may write.
            try second.saveSnapshot(StoredSnapshot(number: 4, body: [1]), of: "s")
            #expect(try first.load("s") == StoredSession(snapshot: StoredSnapshot(number: 4, body: [1]), records: [record("s", 5)]))
        }
    }

    @Test func racingNodesLeaveOneSerialHistory() throws {
        let server = try #require(NATSTestServer.shared)
        let settings = natsSettings(server)
        let nodes = [try NATSSessionStore(settings), try NATSSessionStore(settings)]
        defer { for node in nodes { node.close() } }
        let accepted = Locked<[Int: Int]>([:])  // record number -> node
        let refusals = Locked(0)
        // Each node, on two threads, keeps reading the session and appending the next number in its own name.
        onThreads(4) { index in
            let node = index % 2
            let store = nodes[node]
            for _ in 0..<40 {
                guard let next = try? (store.load("race")?.lastNumber ?? 0) + 1 else { continue }
                let body = Array("{\"node\":\(node),\"thread\":\(index)}".utf8)
                switch appendWaiting(StoredRecord(session: "race", number: next, body: body), to: store) {
                case .success:
                    accepted.withLock { accepted in
                        #expect(accepted[next] == nil, "record \(next) was accepted twice")
                        accepted[next] = index
                    }
                case .failure(let error):
                    #expect(error.kind == .outOfOrder, "\(error)")
                    refusals.withLock { $0 += 1 }
                }
            }
        }
        let winners = accepted.withLock { $0 }
        let log = try #require(try nodes[0].load("race"))
        #expect(log.records.map(\.number) == Array(1...log.records.count), "a gap-free history")
        #expect(log.records.count == winners.count, "every accepted record is in it, nothing else")
        for stored in log.records {
            let index = try #require(winners[stored.number])
            #expect(stored.body == Array("{\"node\":\(index % 2),\"thread\":\(index)}".utf8), "record \(stored.number) is its winner's")
        }
        #expect(try nodes[1].load("race") == log, "both nodes read the same log")
        #expect(winners.count + refusals.withLock { $0 } <= 160)
    }

    @Test func aLoadWhileAnotherNodeCompactsSeesAWholeLog() throws {
        try withTwoNodes { writer, reader in
            appendWaiting(record("c", 1), to: writer)
            let done = Locked(false)
            let loads = Locked(0)
            onThreads(2) { index in
                if index == 0 {
                    defer { done.withLock { $0 = true } }
                    for number in 2...150 {
                        appendWaiting(record("c", number), to: writer)
                        // A snapshot a few records behind the last, as the server takes them, purging what it stands for.
                        if number % 7 == 0 {
                            try? writer.saveSnapshot(StoredSnapshot(number: number - 2, body: Array("{\"n\":\(number - 2)}".utf8)), of: "c")
                        }
                    }
                } else {
                    while !done.withLock({ $0 }) {
                        guard let loaded = try? reader.load("c") else { continue }
                        loads.withLock { $0 += 1 }
                        let first = (loaded.snapshot?.number ?? 0) + 1
                        #expect(loaded.records.map(\.number) == Array(first..<(first + loaded.records.count)), "a whole log")
                        if let snapshot = loaded.snapshot {
                            #expect(snapshot.body == Array("{\"n\":\(snapshot.number)}".utf8))
                        }
                    }
                }
            }
            #expect(loads.withLock { $0 } > 0)
            let final = try #require(try reader.load("c"))
            #expect(final.lastNumber == 150)
        }
    }

    @Test func anotherNodeRestoresEverythingAcknowledged() throws {
        let server = try #require(NATSTestServer.shared)
        let settings = natsSettings(server)
        let first = try NATSSessionStore(settings)
        let log = CompletionLog()
        for number in 1...30 { log.append(record("a", number, bodySize: 200), to: first, lastActive: 1_000 + Int64(number)) }
        for number in 1...5 { log.append(record("b", number), to: first, lastActive: 900) }
        try first.saveSnapshot(StoredSnapshot(number: 20, body: Array("{\"through\":20}".utf8)), of: "a")
        try first.removeRecords([22, 25], of: "a")
        for number in 31...35 { log.append(record("a", number), to: first, lastActive: 2_000) }
        first.flush()
        #expect(log.outcomes.allSatisfy { $0.failure == nil })
        let before = try #require(try first.load("a"))
        #expect(before.snapshot?.number == 20)
        #expect(before.records.map(\.number) == [21, 23, 24] + Array(26...35))
        first.close()

        let second = try NATSSessionStore(settings)
        defer { second.close() }
        #expect(try second.load("a") == before)
        #expect(try second.load("b")?.records.map(\.number) == [1, 2, 3, 4, 5])
        #expect(try second.sessionCount() == 2)
        #expect(try second.sessions(lastActiveBefore: 10_000, limit: 10) == ["b", "a"])
        #expect(failureKind(appendWaiting(record("a", 36), to: second)) == nil, "the new node owns the session now")
        #expect(failureKind(appendWaiting(record("b", 6), to: second)) == nil, "even one it never loaded (it reads the fence)")
        #expect(try second.load("b")?.records.count == 6)
    }

    @Test func aNodeHearsWhichSessionsAnotherNodeTookOverAndFromWhichClaimButNotItsOwnNotices() throws {
        let server = try #require(NATSTestServer.shared)
        let settings = natsSettings(server)
        let first = try NATSSessionStore(settings)
        defer { first.close() }
        let second = try NATSSessionStore(settings)
        defer { second.close() }
        let heardByFirst = Locked([String: SessionClaim]())
        let heardBySecond = Locked([String: SessionClaim]())
        first.observeOwnership { session, claim in heardByFirst.withLock { $0[session] = claim } }
        second.observeOwnership { session, claim in heardBySecond.withLock { $0[session] = claim } }
        // Subscriptions reach the server asynchronously: announce until the first notice arrives.
        #expect(waitUntil(seconds: 5) {
            second.announceOwnership(of: "taken", claim: SessionClaim(order: 7))
            return heardByFirst.withLock { $0["taken"] != nil }
        })
        #expect(heardByFirst.withLock { $0["taken"] } == SessionClaim(order: 7))
        second.announceOwnership(of: "odd id/é", claim: SessionClaim(order: UInt64.max))
        first.announceOwnership(of: "mine", claim: .unordered)
        #expect(waitUntil(seconds: 5) { heardByFirst.withLock { $0["odd id/é"] } == SessionClaim(order: .max) })
        #expect(waitUntil(seconds: 5) { heardBySecond.withLock { $0["mine"] } == .unordered })
        // A real claim announces its order, the stream sequence it was written at.
        #expect(failureKind(appendWaiting(record("claimed", 1), to: first)) == nil)
        let loaded = try #require(try second.load("claimed"))
        let claim = try #require(try second.claim("claimed", asLoaded: loaded))
        #expect(claim.order > 0)
        #expect(waitUntil(seconds: 5) { heardByFirst.withLock { $0["claimed"] } == claim })
        usleep(200_000)
        #expect(heardByFirst.withLock { $0["mine"] } == nil, "a node ignores its own notices")
        #expect(heardBySecond.withLock { $0["taken"] == nil && $0["odd id/é"] == nil && $0["claimed"] == nil })
    }

    /// A notice reads as `<node> <order>`; a node of an earlier version sent its id alone, and an order that does not
    /// read is not trusted: both are claims of unknown order, which drop any copy.
    @Test func anOwnershipNoticeReadsItsNodeAndOrderAndAnythingElseAsUnordered() {
        let cases: [(String, String, SessionClaim)] = [
            ("1f2e 42", "1f2e", SessionClaim(order: 42)),
            ("1f2e 42 later-field", "1f2e", SessionClaim(order: 42)),
            ("1f2e", "1f2e", .unordered),
            ("1f2e x", "1f2e", .unordered),
            ("1f2e -1", "1f2e", .unordered),
            ("1f2e 99999999999999999999", "1f2e", .unordered),
        ]
        for (payload, node, claim) in cases {
            let notice = NATSSessionStore.ownershipNotice(Array(payload.utf8))
            #expect(Array(notice.node) == Array(node.utf8) && notice.claim == claim, "\(payload)")
        }
    }

    @Test func anOutageFailsAppendsQuicklyAndEndsWithoutReopening() throws {
        let server = try NATSTestServer()
        let store = try NATSSessionStore(natsSettings(server, waitMilliseconds: 1_000))
        defer { store.close() }
        #expect(failureKind(appendWaiting(record("a", 1), to: store)) == nil)
        #expect(store.isAvailable)

        server.stop()
        let stopped = ContinuousClock.now
        #expect(waitUntil(seconds: 5) { !store.isAvailable }, "the store notices the lost connection")
        let outcome = appendWaiting(record("a", 2), to: store)
        #expect(failureKind(outcome) == .unavailable, "\(outcome)")
        #expect(ContinuousClock.now - stopped < .seconds(6), "within a bounded time")
        #expect(storeError { () throws(SessionStoreError) in _ = try store.load("a") }?.kind == .unavailable)
        #expect(storeError { () throws(SessionStoreError) in _ = try store.sessionCount() }?.kind == .unavailable)
        #expect(storeError { () throws(SessionStoreError) in try store.touch("a", at: 5) }?.kind == .unavailable)

        try server.start()
        #expect(waitUntil(seconds: 15) { store.isAvailable }, "the store reconnects by itself")
        // After a failed append the session's later records are refused until its log is read again, as a restore does.
        #expect(failureKind(appendWaiting(record("a", 3), to: store)) == .outOfOrder, "record 3 would follow a failed one")
        #expect(try store.load("a")?.records.map(\.number) == [1])
        #expect(failureKind(appendWaiting(record("a", 2), to: store)) == nil, "record 2 was not stored: it is appended now")
        #expect(failureKind(appendWaiting(record("a", 3), to: store)) == nil)
        #expect(try store.load("a")?.records.map(\.number) == [1, 2, 3])
    }

    @Test func appendsInFlightWhenTheServerStopsFailAndLoseNothingAcknowledged() throws {
        let server = try NATSTestServer()
        let store = try NATSSessionStore(natsSettings(server, waitMilliseconds: 1_000))
        defer { store.close() }
        let log = CompletionLog()
        for session in 0..<20 {
            for number in 1...20 { log.append(record("s\(session)", number), to: store) }
        }
        server.stop()
        store.flush()
        #expect(log.count == 400, "every append completed")
        let acknowledged = log.outcomes.filter { $0.failure == nil }
        try server.start()
        #expect(waitUntil(seconds: 15) { store.isAvailable })
        for session in 0..<20 {
            let numbers = acknowledged.filter { $0.session == "s\(session)" }.map(\.number)
            let stored = try store.load("s\(session)")?.records.map(\.number) ?? []
            #expect(Array(stored.prefix(numbers.count)) == numbers, "what was acknowledged is stored (s\(session))")
        }
    }

    @Test func sessionStoresOpensTheJetStreamStoreOfANATSURL() throws {
        let server = try #require(NATSTestServer.shared)
        var configuration = ServerConfiguration()
        configuration.sessionStore = server.url
        configuration.natsReplicas = 1
        let store = try SessionStores.open(configuration)
        defer { store.close() }
        let nats = try #require(store as? NATSSessionStore)
        #expect(nats.configuration.name == "MVVMR")
        #expect(nats.configuration.activityTimeToLiveSeconds == 3_600, "twice SESSION_TTL_SECONDS (1800)")
        #expect(store.isAvailable)
        configuration.sessionDurability = .machine
        #expect(throws: SessionStoreError.self, "JetStream decides when it syncs") { _ = try SessionStores.open(configuration) }
    }

    @Test func aStoreOpenedWhileNATSIsDownWorksOnceItIsUp() throws {
        let server = try NATSTestServer()
        server.stop()
        let store = try NATSSessionStore(natsSettings(server, waitMilliseconds: 1_000))
        defer { store.close() }
        #expect(!store.isAvailable)
        #expect(failureKind(appendWaiting(record("a", 1), to: store)) == .unavailable)
        #expect(storeError { () throws(SessionStoreError) in _ = try store.load("a") }?.kind == .unavailable)
        #expect(storeError { () throws(SessionStoreError) in try store.delete("a") }?.kind == .unavailable)

        try server.start()
        #expect(waitUntil(seconds: 15) { store.isAvailable }, "it connects, and makes the stream and the bucket")
        #expect(failureKind(appendWaiting(record("a", 1), to: store)) == nil)
        #expect(try store.load("a")?.records.map(\.number) == [1])
        #expect(try store.sessionCount() == 1)
    }

    @Test func idsThatAreNoSubjectTokensWorkEverywhere() throws {
        let server = try #require(NATSTestServer.shared)
        let store = try NATSSessionStore(natsSettings(server))
        defer { store.close() }
        let ids = ["sessión 😀", "a.b", "*", ">", "=x", ""]
        for (index, id) in ids.enumerated() {
            #expect(failureKind(appendWaiting(record(id, 1), to: store, lastActive: 100 + Int64(index))) == nil, "\(id)")
        }
        try store.touch("a.b", at: 5)
        #expect(try store.sessions(lastActiveBefore: 1_000, limit: 10) == ["a.b", "sessión 😀", "*", ">", "=x", ""])
        try store.removeRecords([1], of: "*")
        #expect(try store.load("*") == StoredSession(snapshot: nil, records: []))
        #expect(try store.load(">")?.records == [record(">", 1)], "a wildcard id reads its own subject only")
        try store.delete(">")
        #expect(try store.load(">") == nil)
        #expect(try store.sessionCount() == ids.count - 1)
    }

    @Test func theStreamKeepsLogsForeverAndTheBucketsKeysLiveTheirTimeToLive() throws {
        let server = try #require(NATSTestServer.shared)
        var settings = natsSettings(server)
        settings.activityTimeToLiveSeconds = 90
        let store = try NATSSessionStore(settings)
        defer { store.close() }
        let (log, bucket) = try store.streamSettings()
        #expect(log.maxAge == 0, "a session's log never ages out")
        #expect(log.replicas == 1)
        #expect(bucket.maxAge == 90 * 1_000_000_000, "nats.c takes durations in nanoseconds")
    }

    @Test func serverListsAreParsed() {
        #expect(NATSSessionStore.servers(in: "nats://127.0.0.1:4222") == ["nats://127.0.0.1:4222"])
        #expect(
            NATSSessionStore.servers(in: "nats://a:4222,b:4223,nats://c:4224")
                == ["nats://a:4222", "nats://b:4223", "nats://c:4224"])
        #expect(NATSSessionStore.servers(in: "nats://a") == nil)
        #expect(NATSSessionStore.servers(in: "nats://a:0") == nil)
        #expect(NATSSessionStore.servers(in: "nats://a:4222,") == nil)
        #expect(NATSSessionStore.servers(in: "sqlite:x") == nil)
    }

    @Test func sessionIdsBecomeSubjectTokensAndBack() {
        for id in ["abcDEF012-_", "", "=x", "a.b", "sessión 😀", "*", ">"] {
            let key = NATSLogFormat.key(of: id)
            #expect(key.utf8.allSatisfy { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) }, "\(key)")
            #expect(NATSLogFormat.session(ofKey: Substring(key)) == id)
        }
        #expect(NATSLogFormat.key(of: "abc") == "abc")
        #expect(NATSLogFormat.numberList([9, 2, 3, 4, 7, 3]) == Array("2-4,7,9".utf8))
        #expect(NATSLogFormat.numbers(inList: Array("2-4,7,9".utf8)) == [2, 3, 4, 7, 9])
    }
}

/// Polls `condition` every 50 ms for up to `seconds`; whether it held.
func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(50_000)
    }
    return condition()
}
