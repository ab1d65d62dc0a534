import Locking
import Testing

@testable import MVVMRServer

/// The behaviour every ``SessionStore`` shares, run against each store.
@Suite struct SessionStoreTests {
    @Test(arguments: StoreKind.allCases)
    func appendedRecordsLoadInNumberOrderPerSession(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        defer { fixture.tearDown() }
        let store = fixture.store
        let log = CompletionLog()
        for number in 1...5 {
            log.append(record("a", number), to: store)
            if number <= 3 { log.append(record("b", number), to: store) }
        }
        store.flush()
        #expect(log.outcomes.allSatisfy { $0.failure == nil })
        #expect(log.outcomes.map(\.session) == ["a", "b", "a", "b", "a", "b", "a", "a"])
        let a = try #require(try store.load("a"))
        #expect(a == StoredSession(snapshot: nil, records: (1...5).map { record("a", $0) }))
        #expect(a.lastNumber == 5)
        #expect(try store.load("b")?.records.map(\.number) == [1, 2, 3])
        #expect(try store.load("unknown") == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func fenceRefusesGapsDuplicatesAndAFirstRecordOtherThanOne(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        defer { fixture.tearDown() }
        let store = fixture.store
        #expect(failureKind(appendWaiting(record("a", 2), to: store)) == .outOfOrder)
        #expect(try store.load("a") == nil)
        #expect(try store.sessionCount() == 0)
        #expect(failureKind(appendWaiting(record("a", 1), to: store)) == nil)
        #expect(failureKind(appendWaiting(record("a", 3), to: store)) == .outOfOrder)
        #expect(failureKind(appendWaiting(record("a", 1), to: store)) == .outOfOrder)
        #expect(failureKind(appendWaiting(record("a", 0), to: store)) == .outOfOrder)
        #expect(failureKind(appendWaiting(record("a", -1), to: store)) == .outOfOrder)
        #expect(failureKind(appendWaiting(record("a", Int.max), to: store)) == .outOfOrder)
        #expect(failureKind(appendWaiting(record("a", 2), to: store)) == nil)
        #expect(try store.load("a")?.records.map(\.number) == [1, 2])
        if case .failure(let error) = appendWaiting(record("a", 5), to: store) {
            #expect(error.message.contains("record 5 of session a"), "\(error.message)")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func fencedRecordsInOneBatchFailAloneAndTheRestChain(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        defer { fixture.tearDown() }
        let store = fixture.store
        let log = CompletionLog()
        fixture.inOneBatch {
            log.append(record("a", 1), to: store)
            log.append(record("a", 3), to: store)  // a gap
            log.append(record("a", 2), to: store)
            log.append(record("a", 2), to: store)  // a duplicate
            log.append(record("b", 2), to: store)  // a new session must start at 1
            log.append(record("b", 1), to: store)
            log.append(record("a", 3), to: store)
            log.append(record("b", 2), to: store)
        }
        #expect(log.outcomes.map(\.number) == [1, 3, 2, 2, 2, 1, 3, 2], "completions run in queue order")
        #expect(log.outcomes.map(\.failure) == [nil, .outOfOrder, nil, .outOfOrder, .outOfOrder, nil, nil, nil])
        #expect(try store.load("a")?.records.map(\.number) == [1, 2, 3])
        #expect(try store.load("b")?.records.map(\.number) == [1, 2])
        if let sqlite = store as? SQLiteSessionStore {
            #expect(sqlite.commitCount == 1, "the eight appends made one transaction")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func snapshotReplacesTheRecordsItStandsFor(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        defer { fixture.tearDown() }
        let store = fixture.store
        for number in 1...5 { appendWaiting(record("a", number), to: store) }
        let snapshot = StoredSnapshot(number: 3, body: Array("{\"state\":3}".utf8))
        try store.saveSnapshot(snapshot, of: "a")
        var loaded = try #require(try store.load("a"))
        #expect(loaded.snapshot == snapshot)
        #expect(loaded.records.map(\.number) == [4, 5])
        #expect(loaded.lastNumber == 5)

        #expect(
            storeError { () throws(SessionStoreError) in
                try store.saveSnapshot(StoredSnapshot(number: 6, body: []), of: "a")
            }?.kind == .outOfOrder, "past the last record")
        #expect(
            storeError { () throws(SessionStoreError) in
                try store.saveSnapshot(StoredSnapshot(number: 2, body: []), of: "a")
            }?.kind == .outOfOrder, "before the snapshot it has")
        #expect(
            storeError { () throws(SessionStoreError) in
                try store.saveSnapshot(StoredSnapshot(number: 0, body: []), of: "unknown")
            }?.kind == .outOfOrder, "no such session")
        #expect(try store.load("unknown") == nil)
        #expect(try store.load("a") == loaded, "a refused snapshot changes nothing")

        #expect(failureKind(appendWaiting(record("a", 6), to: store)) == nil)
        let whole = StoredSnapshot(number: 6, body: [])
        try store.saveSnapshot(whole, of: "a")
        loaded = try #require(try store.load("a"))
        #expect(loaded == StoredSession(snapshot: whole, records: []))
        #expect(loaded.lastNumber == 6)
        #expect(failureKind(appendWaiting(record("a", 7), to: store)) == nil)
        #expect(try store.load("a")?.records.map(\.number) == [7])
    }

    @Test(arguments: StoreKind.allCases)
    func removedRecordsGoAndTheNumberingGoesOn(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        defer { fixture.tearDown() }
        let store = fixture.store
        for number in 1...6 { appendWaiting(record("a", number), to: store) }
        try store.removeRecords([2, 4, 6, 99], of: "a")
        #expect(try store.load("a")?.records.map(\.number) == [1, 3, 5])
        #expect(failureKind(appendWaiting(record("a", 6), to: store)) == .outOfOrder, "6 was taken, then removed")
        #expect(failureKind(appendWaiting(record("a", 7), to: store)) == nil)
        try store.removeRecords([1], of: "unknown")
        try store.removeRecords([], of: "a")
        #expect(try store.load("a")?.records.map(\.number) == [1, 3, 5, 7])
        #expect(try store.sessionCount() == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func deleteForgetsTheSessionAndItsNumbering(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        defer { fixture.tearDown() }
        let store = fixture.store
        for number in 1...3 { appendWaiting(record("a", number), to: store) }
        appendWaiting(record("b", 1), to: store)
        try store.saveSnapshot(StoredSnapshot(number: 2, body: [1]), of: "a")
        try store.delete("a")
        try store.delete("never")
        #expect(try store.load("a") == nil)
        #expect(try store.sessionCount() == 1)
        #expect(failureKind(appendWaiting(record("a", 4), to: store)) == .outOfOrder)
        #expect(failureKind(appendWaiting(record("a", 1), to: store)) == nil, "record 1 creates it anew")
        #expect(try store.load("a") == StoredSession(snapshot: nil, records: [record("a", 1)]))
        #expect(try store.load("b")?.records.count == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func idleSessionsComeOldestFirstUpToTheLimit(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        defer { fixture.tearDown() }
        let store = fixture.store
        appendWaiting(record("a", 1), to: store, lastActive: 100)
        appendWaiting(record("b", 1), to: store, lastActive: 50)
        appendWaiting(record("c", 1), to: store, lastActive: 200)
        appendWaiting(record("d", 1), to: store, lastActive: 50)
        try store.touch("a", at: 10)
        try store.touch("unknown", at: 1)
        #expect(try store.sessions(lastActiveBefore: 150, limit: 10) == ["a", "b", "d"])
        #expect(try store.sessions(lastActiveBefore: 150, limit: 2) == ["a", "b"])
        #expect(try store.sessions(lastActiveBefore: 10, limit: 10) == [])
        #expect(try store.sessions(lastActiveBefore: 11, limit: 10) == ["a"])
        #expect(try store.sessions(lastActiveBefore: 1_000, limit: 0) == [])
        #expect(try store.sessions(lastActiveBefore: 1_000, limit: 10) == ["a", "b", "d", "c"])
        appendWaiting(record("b", 2), to: store, lastActive: 300)
        #expect(
            try store.sessions(lastActiveBefore: 1_000, limit: 10) == ["a", "d", "c", "b"], "an append is activity")
        #expect(try store.sessionCount() == 4, "touching an unknown session creates none")
    }

    @Test(arguments: StoreKind.allCases)
    func sessionCountFollowsCreationAndDeletion(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        defer { fixture.tearDown() }
        let store = fixture.store
        #expect(try store.sessionCount() == 0)
        for index in 0..<10 { appendWaiting(record("s\(index)", 1), to: store) }
        appendWaiting(record("s0", 2), to: store)
        #expect(try store.sessionCount() == 10)
        try store.delete("s3")
        #expect(try store.sessionCount() == 9)
    }

    @Test(arguments: StoreKind.allCases)
    func mutationsComeAfterTheSessionsQueuedAppends(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        defer { fixture.tearDown() }
        let store = fixture.store
        let log = CompletionLog()
        for number in 1...50 { log.append(record("a", number), to: store, lastActive: 5) }
        // Not waited for: the snapshot must still see all fifty.
        try store.saveSnapshot(StoredSnapshot(number: 50, body: [7]), of: "a")
        for number in 51...60 { log.append(record("a", number), to: store, lastActive: 5) }
        try store.removeRecords([55], of: "a")
        for number in 61...70 { log.append(record("a", number), to: store, lastActive: 5) }
        try store.touch("a", at: 1)
        #expect(log.count == 70)
        #expect(log.outcomes.allSatisfy { $0.failure == nil })
        #expect(try store.load("a")?.records.map(\.number) == Array(51...54) + Array(56...70))
        #expect(try store.sessions(lastActiveBefore: 2, limit: 1) == ["a"], "the touch came after the appends")
        for number in 1...3 { log.append(record("b", number), to: store) }
        try store.delete("b")
        #expect(try store.load("b") == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func flushReturnsOnceEveryQueuedAppendCompleted(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        defer { fixture.tearDown() }
        let store = fixture.store
        let log = CompletionLog()
        for session in 0..<20 {
            for number in 1...10 { log.append(record("s\(session)", number), to: store) }
        }
        store.flush()
        #expect(log.count == 200)
        #expect(log.outcomes.allSatisfy { $0.failure == nil })
    }

    @Test(arguments: StoreKind.allCases)
    func closeCompletesWhatIsQueuedThenRefusesEverything(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        defer { fixture.tearDown() }
        let store = fixture.store
        let log = CompletionLog()
        for number in 1...100 { log.append(record("a", number), to: store) }
        store.close()
        #expect(log.count == 100)
        #expect(log.outcomes.allSatisfy { $0.failure == nil })

        let completedAtOnce = Locked(false)
        store.append(record("a", 101), lastActive: 0) { outcome in
            if case .failure(let error) = outcome, error == .closed { completedAtOnce.withLock { $0 = true } }
        }
        #expect(completedAtOnce.withLock { $0 }, "an append after close fails with `closed` before it returns")
        #expect(storeError { () throws(SessionStoreError) in _ = try store.load("a") } == .closed)
        #expect(storeError { () throws(SessionStoreError) in _ = try store.sessionCount() } == .closed)
        #expect(
            storeError { () throws(SessionStoreError) in
                _ = try store.sessions(lastActiveBefore: 0, limit: 1)
            } == .closed)
        #expect(
            storeError { () throws(SessionStoreError) in
                try store.saveSnapshot(StoredSnapshot(number: 1, body: []), of: "a")
            } == .closed)
        #expect(storeError { () throws(SessionStoreError) in try store.removeRecords([1], of: "a") } == .closed)
        #expect(storeError { () throws(SessionStoreError) in try store.touch("a", at: 1) } == .closed)
        #expect(storeError { () throws(SessionStoreError) in try store.delete("a") } == .closed)
        store.flush()
        store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func bodiesAndIdsComeBackByteForByte(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        defer { fixture.tearDown() }
        let store = fixture.store
        let identifier = "sessión 😀 \"quoted\" 'x'"
        let records = [
            StoredRecord(session: identifier, number: 1, body: []),
            StoredRecord(session: identifier, number: 2, body: Array(0...255)),
            StoredRecord(session: identifier, number: 3, body: [UInt8](repeating: 0, count: 70_000)),
        ]
        for stored in records { #expect(failureKind(appendWaiting(stored, to: store)) == nil) }
        #expect(failureKind(appendWaiting(StoredRecord(session: "", number: 1, body: [1]), to: store)) == nil)
        #expect(try store.load(identifier)?.records == records)
        #expect(try store.load("")?.records.map(\.body) == [[1]])
        #expect(try store.sessions(lastActiveBefore: 1, limit: 5).sorted() == ["", identifier])
        try store.saveSnapshot(StoredSnapshot(number: 1, body: []), of: identifier)
        #expect(try store.load(identifier)?.snapshot == StoredSnapshot(number: 1, body: []))
    }

    @Test(arguments: StoreKind.allCases)
    func aCompletionCallingTheStoreDoesNotHangIt(kind: StoreKind) throws {
        let fixture = try StoreFixture(kind)
        defer { fixture.tearDown() }
        let store = fixture.store
        let flushedInside = Locked(false)
        appendWaiting(record("a", 1), to: store)
        store.append(record("a", 2), lastActive: 0) { _ in
            store.flush()
            flushedInside.withLock { $0 = true }
        }
        store.flush()
        #expect(flushedInside.withLock { $0 })
        #expect(try store.load("a")?.records.count == 2)
    }

    @Test func memoryStoreCompletesAppendsBeforeTheyReturn() throws {
        let store = MemorySessionStore()
        let completed = Locked(false)
        store.append(record("a", 1), lastActive: 0) { _ in completed.withLock { $0 = true } }
        #expect(completed.withLock { $0 })
        #expect(store.durability == .process)
    }
}
