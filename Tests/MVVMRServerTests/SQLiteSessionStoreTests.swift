import Foundation
import Locking
import Testing

@testable import MVVMRServer

/// What only the SQLite store does: keep sessions in a file across openings, group commits, refuse bad files,
/// and survive a full or read-only file.
@Suite struct SQLiteSessionStoreTests {
    @Test(arguments: SessionDurability.allCases)
    func reopeningTheFileShowsEverythingCompletedBefore(durability: SessionDurability) throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/nested/twice/sessions.sqlite"
        let first = try SQLiteSessionStore(path: path, durability: durability)
        #expect(first.durability == durability)
        for number in 1...5 { appendWaiting(record("a", number), to: first, lastActive: 40) }
        for number in 1...2 { appendWaiting(record("b", number), to: first, lastActive: 20) }
        try first.saveSnapshot(StoredSnapshot(number: 2, body: Array("{\"n\":2}".utf8)), of: "a")
        try first.removeRecords([4], of: "a")
        try first.touch("b", at: 10)
        let expected = try #require(try first.load("a"))

        // A second store on the same file (another process would do the same) sees every completed append.
        let second = try SQLiteSessionStore(path: path, durability: durability)
        #expect(try second.load("a") == expected)
        second.close()
        first.close()

        let reopened = try SQLiteSessionStore(path: path, durability: durability)
        defer { reopened.close() }
        #expect(try reopened.load("a") == expected)
        #expect(expected.records.map(\.number) == [3, 5])
        #expect(try reopened.load("b")?.records.map(\.number) == [1, 2])
        #expect(try reopened.sessionCount() == 2)
        #expect(try reopened.sessions(lastActiveBefore: 100, limit: 10) == ["b", "a"])
        #expect(failureKind(appendWaiting(record("a", 6), to: reopened)) == nil, "the numbering goes on")
        #expect(failureKind(appendWaiting(record("a", 6), to: reopened)) == .outOfOrder)
    }

    @Test(arguments: SessionDurability.allCases)
    func durabilityChoosesTheWritersSynchronousMode(durability: SessionDurability) throws {
        let fixture = try StoreFixture(.sqlite, durability: durability)
        defer { fixture.tearDown() }
        let store = try #require(fixture.store as? SQLiteSessionStore)
        // PRAGMA synchronous: 1 is NORMAL, 2 is FULL.
        #expect(try store.writerPragma("PRAGMA synchronous") == (durability == .process ? 1 : 2))
        #expect(try store.writerPragma("PRAGMA busy_timeout") == 5_000)
        let walFile = store.path + "-wal"
        #expect(FileManager.default.fileExists(atPath: walFile), "the file is in WAL mode")
    }

    @Test(arguments: SessionDurability.allCases)
    func manyThreadsAppendingToManySessionsAreGroupCommitted(durability: SessionDurability) throws {
        let fixture = try StoreFixture(.sqlite, durability: durability)
        defer { fixture.tearDown() }
        let store = try #require(fixture.store as? SQLiteSessionStore)
        let threads = 8
        let sessionsPerThread = 50
        let recordsPerSession = 20
        let log = CompletionLog()
        // Each thread owns its sessions (as a server does: one session, one writer) and goes round them, so
        // that every batch mixes many sessions and several records of one.
        onThreads(threads) { thread in
            for number in 1...recordsPerSession {
                for session in 0..<sessionsPerThread {
                    log.append(
                        record("t\(thread)-s\(session)", number, bodySize: 200), to: store, lastActive: Int64(number))
                }
                if number % 5 == 0 { _ = try? store.load("t\(thread)-s0") }  // reads while the writer writes
            }
        }
        store.flush()
        let total = threads * sessionsPerThread * recordsPerSession
        #expect(log.count == total)
        #expect(log.outcomes.allSatisfy { $0.failure == nil }, "\(log.failureMessages.prefix(3))")
        #expect(try store.sessionCount() == threads * sessionsPerThread)
        for thread in 0..<threads {
            for session in 0..<sessionsPerThread {
                let loaded = try store.load("t\(thread)-s\(session)")
                #expect(loaded?.records.map(\.number) == Array(1...recordsPerSession))
            }
        }
        let commits = store.commitCount
        #expect(commits > 0)
        #expect(commits * 10 <= total, "\(commits) commits for \(total) records: appends were not grouped")
    }

    @Test func theWriterCommitsTheNextBatchWhileTheLastOnesCompletionsRunAndTheyRunInOrder() throws {
        let fixture = try StoreFixture(.sqlite)
        defer { fixture.tearDown() }
        let store = try #require(fixture.store as? SQLiteSessionStore)
        let order = Locked([String]())
        let firstIsRunning = DispatchSemaphore(value: 0)
        let releaseFirst = DispatchSemaphore(value: 0)
        store.append(record("a", 1), lastActive: 0) { _ in
            order.withLock { $0.append("a1") }
            firstIsRunning.signal()
            releaseFirst.wait()
        }
        firstIsRunning.wait()
        let commitsBefore = store.commitCount
        store.append(record("b", 1), lastActive: 0) { _ in order.withLock { $0.append("b1") } }
        // The writer commits b's record while a's completion still runs on the completion thread.
        let deadline = Date().addingTimeInterval(10)
        while store.commitCount == commitsBefore && Date() < deadline { usleep(1_000) }
        #expect(store.commitCount > commitsBefore, "the next batch was committed meanwhile")
        #expect(try store.load("b")?.records == [record("b", 1)], "and a read sees it")
        #expect(order.withLock { $0 } == ["a1"], "its completion waits for the one before")
        releaseFirst.signal()
        store.flush()
        #expect(order.withLock { $0 } == ["a1", "b1"])
    }

    @Test func threadsWaitingForEachAppendShareCommits() throws {
        let fixture = try StoreFixture(.sqlite, durability: .machine)
        defer { fixture.tearDown() }
        let store = try #require(fixture.store as? SQLiteSessionStore)
        let failures = Locked(0)
        onThreads(8) { thread in
            for number in 1...25 {
                if failureKind(appendWaiting(record("t\(thread)", number), to: store)) != nil {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        for thread in 0..<8 { #expect(try store.load("t\(thread)")?.records.count == 25) }
        // Each commit is an fsync; while one runs, the other threads' appends gather for the next (some 35
        // commits here, when measured; over 100 under ThreadSanitizer on a loaded machine, where the threads wake
        // late): fewer commits than appends, so some appends shared one. (Without grouping it is exactly 200.)
        #expect(store.commitCount < 200, "\(store.commitCount) commits for 200 appends")
    }

    @Test func loadDoesNotWaitBehindQueuedAppends() throws {
        let fixture = try StoreFixture(.sqlite)
        defer { fixture.tearDown() }
        let store = try #require(fixture.store as? SQLiteSessionStore)
        appendWaiting(record("a", 1), to: store)
        store.suspendWriting()
        let log = CompletionLog()
        for number in 2...1_000 { log.append(record("a", number), to: store) }
        // The writer holds all of them; a read answers at once with what was committed.
        #expect(try store.load("a")?.records.map(\.number) == [1])
        #expect(try store.sessionCount() == 1)
        #expect(log.count == 0)
        store.resumeWriting()
        store.flush()
        #expect(log.count == 999)
        #expect(try store.load("a")?.records.count == 1_000)
    }

    @Test func aFileThatIsNotSQLiteIsRefusedAtOpening() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let garbage = Data((0..<8_192).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        #expect(FileManager.default.createFile(atPath: path, contents: garbage))
        let error = storeError { () throws(SessionStoreError) in
            _ = try SQLiteSessionStore(path: path, durability: .process)
        }
        #expect(error?.kind == .unavailable)
        #expect(error?.message.contains("not a database") == true, "\(String(describing: error))")
        #expect(error?.message.contains(path) == true)
        let after = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(after == garbage, "the file is left as it was")
    }

    @Test func aCorruptedStoreIsRefusedAtOpeningOrAtItsFirstRead() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let store = try SQLiteSessionStore(path: path, durability: .process)
        for number in 1...200 { appendWaiting(record("a", number, bodySize: 200), to: store) }
        store.close()
        // Overwrites every page after the first (the header stays SQLite's): the tables' pages are garbage.
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let size = try handle.seekToEnd()
        #expect(size > 8_192)
        try handle.seek(toOffset: 4_096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size) - 4_096))
        try handle.close()
        do throws(SessionStoreError) {
            let reopened = try SQLiteSessionStore(path: path, durability: .process)
            defer { reopened.close() }
            let error = storeError { () throws(SessionStoreError) in _ = try reopened.load("a") }
            #expect(error?.kind == .unavailable, "a corrupt page is reported, not loaded")
            #expect(failureKind(appendWaiting(record("a", 201), to: reopened)) == .unavailable)
        } catch {
            #expect(error.kind == .unavailable)
            #expect(error.message.contains(path), "\(error)")
        }
    }

    @Test func aNewerSchemaIsRefusedWithTheVersions() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let store = try SQLiteSessionStore(path: path, durability: .process)
        _ = try store.writerPragma("PRAGMA user_version = 7")
        store.close()
        let error = storeError { () throws(SessionStoreError) in
            _ = try SQLiteSessionStore(path: path, durability: .process)
        }
        #expect(error?.kind == .unavailable)
        #expect(
            error?.message.contains("schema version 7 is newer than this build's (\(SQLiteSchema.version))") == true,
            "\(String(describing: error))")
    }

    @Test func aPathThatCannotBeAFileIsRefusedAtOpening() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let error = storeError { () throws(SessionStoreError) in
            _ = try SQLiteSessionStore(path: directory.path, durability: .process)
        }
        #expect(error?.kind == .unavailable, "a directory")
        #expect(FileManager.default.createFile(atPath: directory.path + "/plain", contents: Data()))
        let under = storeError { () throws(SessionStoreError) in
            _ = try SQLiteSessionStore(path: directory.path + "/plain/sessions.sqlite", durability: .process)
        }
        #expect(under?.kind == .unavailable, "under a file")
        #expect(under?.message.contains("cannot create the directory") == true, "\(String(describing: under))")
    }

    @Test func aFullFileFailsWholeBatchesKeepsReadingAndRecoversWithoutReopening() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let setUp = try SQLiteSessionStore(path: path, durability: .process)
        for number in 1...3 { appendWaiting(record("a", number), to: setUp) }
        let pages = try #require(try setUp.writerPragma("PRAGMA page_count"))
        setUp.close()

        // The file may not grow by a single page: small changes fit the pages it has, a big record does not.
        let store = try SQLiteSessionStore(
            path: path, durability: .process, testing: .init(maximumPageCount: Int(pages)))
        defer { store.close() }
        #expect(failureKind(appendWaiting(record("a", 4), to: store)) == nil, "a small record fits")
        let big = StoredRecord(session: "b", number: 1, body: [UInt8](repeating: 0x41, count: 64 * 1_024))
        guard case .failure(let full) = appendWaiting(big, to: store) else {
            Issue.record("a 64 KiB record went into a file that may not grow")
            return
        }
        #expect(full.kind == .unavailable)
        #expect(full.message.contains("full") && full.message.contains(path), "\(full.message)")

        // One batch: the small record (which fits, as shown above and below) is rolled back with the big one.
        let log = CompletionLog()
        store.suspendWriting()
        log.append(record("a", 5), to: store)
        log.append(big, to: store)
        log.append(record("a", 6), to: store)
        store.resumeWriting()
        store.flush()
        #expect(log.outcomes.map(\.failure) == [.unavailable, .unavailable, .unavailable])
        #expect(log.failureMessages.allSatisfy { $0.contains("full") })
        #expect(
            try store.load("a")?.records.map(\.number) == [1, 2, 3, 4], "reads go on; nothing of the batch is there")
        #expect(try store.load("b") == nil)
        #expect(try store.sessionCount() == 1)
        #expect(failureKind(appendWaiting(record("a", 5), to: store)) == nil, "record 5 fits, and is still next")

        // Room again (as when the disk is freed): the same store writes again, the writer still alive.
        _ = try store.writerPragma("PRAGMA max_page_count = 1000000")
        #expect(failureKind(appendWaiting(big, to: store)) == nil)
        #expect(failureKind(appendWaiting(record("a", 6), to: store)) == nil)
        #expect(try store.load("b")?.records == [big])
        #expect(try store.load("a")?.records.map(\.number) == [1, 2, 3, 4, 5, 6])
    }

    @Test func aFullFileFailsMutationsToo() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let store = try SQLiteSessionStore(path: path, durability: .process)
        defer { store.close() }
        appendWaiting(record("a", 1), to: store)
        let pages = try #require(try store.writerPragma("PRAGMA page_count"))
        _ = try store.writerPragma("PRAGMA max_page_count = \(pages)")
        let snapshot = StoredSnapshot(number: 1, body: [UInt8](repeating: 0x42, count: 64 * 1_024))
        let error = storeError { () throws(SessionStoreError) in try store.saveSnapshot(snapshot, of: "a") }
        #expect(error?.kind == .unavailable)
        #expect(try store.load("a") == StoredSession(snapshot: nil, records: [record("a", 1)]))
        _ = try store.writerPragma("PRAGMA max_page_count = 1000000")
        try store.saveSnapshot(snapshot, of: "a")
        #expect(try store.load("a") == StoredSession(snapshot: snapshot, records: []))
    }

    @Test func aReadOnlyFileFailsWritesWithSQLitesMessageAndStillReads() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let writable = try SQLiteSessionStore(path: path, durability: .machine)
        for number in 1...3 { appendWaiting(record("a", number), to: writable, lastActive: 5) }
        writable.close()

        let store = try SQLiteSessionStore(path: path, durability: .machine, testing: .init(readOnly: true))
        defer { store.close() }
        guard case .failure(let refused) = appendWaiting(record("a", 4), to: store) else {
            Issue.record("an append to a read-only file succeeded")
            return
        }
        #expect(refused.kind == .unavailable)
        #expect(refused.message.contains("readonly") && refused.message.contains(path), "\(refused.message)")
        #expect(storeError { () throws(SessionStoreError) in try store.touch("a", at: 9) }?.kind == .unavailable)
        #expect(storeError { () throws(SessionStoreError) in try store.delete("a") }?.kind == .unavailable)
        #expect(try store.load("a")?.records.map(\.number) == [1, 2, 3])
        #expect(try store.sessions(lastActiveBefore: 6, limit: 1) == ["a"])
        #expect(failureKind(appendWaiting(record("a", 4), to: store)) == .unavailable, "and again: the writer lives")
    }

    @Test func aReadOnlyOpeningOfAnEmptyFileIsRefused() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/missing.sqlite"
        let error = storeError { () throws(SessionStoreError) in
            _ = try SQLiteSessionStore(path: path, durability: .process, testing: .init(readOnly: true))
        }
        #expect(error?.kind == .unavailable)
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}

extension SQLiteSessionStoreTests {
    @Test func aStatementFailingMidBatchRollsBackTheWholeBatch() throws {
        let fixture = try StoreFixture(.sqlite)
        defer { fixture.tearDown() }
        let store = try #require(fixture.store as? SQLiteSessionStore)
        appendWaiting(record("a", 1), to: store)
        // A trigger (as another program could leave) makes the insert of record 2 of "c" fail: an error SQLite does
        // not roll back by itself, unlike a full disk.
        let intruder = try SQLiteConnection(path: store.path, create: false, readOnly: false)
        intruder.setBusyTimeout(milliseconds: 5_000)
        try intruder.execute(
            "CREATE TRIGGER intruder BEFORE INSERT ON log WHEN NEW.session = 'c' AND NEW.number = 2 "
                + "BEGIN SELECT RAISE(ABORT, 'refused by the intruder'); END")

        let log = CompletionLog()
        fixture.inOneBatch {
            log.append(record("a", 2), to: store)
            log.append(record("c", 1), to: store)
            log.append(record("c", 2), to: store)
            log.append(record("a", 3), to: store)
        }
        #expect(log.outcomes.map(\.failure) == [.unavailable, .unavailable, .unavailable, .unavailable])
        #expect(log.failureMessages.first?.contains("refused by the intruder") == true, "\(log.failureMessages)")
        #expect(try store.load("a")?.records.map(\.number) == [1], "nothing of the batch was kept")
        #expect(try store.load("c") == nil)

        try intruder.execute("DROP TRIGGER intruder")
        fixture.inOneBatch {
            log.append(record("a", 2), to: store)
            log.append(record("c", 1), to: store)
            log.append(record("c", 2), to: store)
        }
        #expect(log.outcomes.suffix(3).map(\.failure) == [nil, nil, nil])
        #expect(try store.load("c")?.records.map(\.number) == [1, 2])
    }
}

extension SQLiteSessionStoreTests {
    @Test func mutationsInABatchChainWithItsAppends() throws {
        let fixture = try StoreFixture(.sqlite)
        defer { fixture.tearDown() }
        let store = try #require(fixture.store as? SQLiteSessionStore)
        let log = CompletionLog()
        let mutations = Locked<[SessionStoreError.Kind?]>([])
        let logMutation: @Sendable (Result<Void, SessionStoreError>) -> Void = { outcome in
            mutations.withLock { $0.append(failureKind(outcome)) }
        }
        fixture.inOneBatch {
            log.append(record("a", 1), to: store)
            log.append(record("a", 2), to: store)
            store.enqueue(.delete(session: "a"), completion: logMutation)
            log.append(record("a", 3), to: store)  // the session is gone: refused
            log.append(record("a", 1), to: store)  // and starts anew
            log.append(record("a", 2), to: store)
            store.enqueue(.saveSnapshot(StoredSnapshot(number: 2, body: [9]), session: "a"), completion: logMutation)
            store.enqueue(.saveSnapshot(StoredSnapshot(number: 3, body: [9]), session: "a"), completion: logMutation)
            log.append(record("a", 3), to: store)
            store.enqueue(.removeRecords([3], session: "a"), completion: logMutation)
            log.append(record("a", 4), to: store)
            store.enqueue(.touch([SessionActivity(session: "a", time: 77)]), completion: logMutation)
        }
        #expect(log.outcomes.map(\.failure) == [nil, nil, .outOfOrder, nil, nil, nil, nil])
        #expect(mutations.withLock { $0 } == [nil, nil, .outOfOrder, nil, nil])
        #expect(store.commitCount == 1)
        #expect(
            try store.load("a")
                == StoredSession(snapshot: StoredSnapshot(number: 2, body: [9]), records: [record("a", 4)]))
        #expect(try store.sessions(lastActiveBefore: 78, limit: 5) == ["a"])
        #expect(try store.sessions(lastActiveBefore: 77, limit: 5) == [])
    }
}
