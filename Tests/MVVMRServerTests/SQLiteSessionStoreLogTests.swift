import Foundation
import Locking
import Testing

@testable import MVVMRServer

/// The SQLite store's layout: appends go to one shared log, which the writer moves into the per-session table now
/// and then. Whatever the log holds, a read finds every completed append, in number order, with no gap.
@Suite struct SQLiteSessionStoreLogTests {
    private static func open(_ path: String, moveThreshold: Int) throws -> SQLiteSessionStore {
        try SQLiteSessionStore(
            path: path, durability: .process,
            testing: SQLiteSessionStore.TestingOptions(logMoveThreshold: moveThreshold, logMoveSlice: .max))
    }

    @Test func recordsInTheLogAndRecordsMovedOutOfItLoadAsOneLog() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = try Self.open(directory.path + "/sessions.sqlite", moveThreshold: 4)
        defer { store.close() }
        for number in 1...10 {
            #expect(failureKind(appendWaiting(record("a", number), to: store)) == nil)
            if number <= 7 { #expect(failureKind(appendWaiting(record("b", number), to: store)) == nil) }
            store.flush()
            // Some of a's records are in `records` by now, the latest in the log.
            #expect(try store.load("a")?.records == (1...number).map { record("a", $0) })
        }
        #expect(store.moveCount >= 3, "the log was moved \(store.moveCount) times")
        #expect(store.logRowCount < 4)
        #expect(try store.load("b")?.records == (1...7).map { record("b", $0) })
        #expect(try store.sessionCount() == 2)
        #expect(failureKind(appendWaiting(record("a", 10), to: store)) == .outOfOrder, "the fence knows moved records")
    }

    @Test func aLongLogIsMovedOldestRowsFirstASliceAtATime() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = try SQLiteSessionStore(
            path: directory.path + "/sessions.sqlite", durability: .process,
            testing: SQLiteSessionStore.TestingOptions(logMoveThreshold: 20, logMoveSlice: 5))
        defer { store.close() }
        for number in 1...40 {
            appendWaiting(record("a", number), to: store, lastActive: Int64(number))
            appendWaiting(record("b", number), to: store, lastActive: 100)
            store.flush()
            #expect(store.logRowCount < 21, "a move of 5 follows every batch that left 20 or more")
            #expect(try store.load("a")?.records == (1...number).map { record("a", $0) })
        }
        #expect(store.moveCount >= 10)
        #expect(store.logRowCount >= 15, "only the oldest rows were moved")
        #expect(try store.load("b")?.records == (1...40).map { record("b", $0) })
        #expect(failureKind(appendWaiting(record("a", 40), to: store)) == .outOfOrder)
        #expect(try store.sessions(lastActiveBefore: 41, limit: 5) == ["a"])
        #expect(try store.sessionCount() == 2)
    }

    @Test func aReopenedFileFindsTheRecordsLeftInTheLogAndTheNumberingGoesOn() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let first = try Self.open(path, moveThreshold: 1_000)
        for number in 1...5 { appendWaiting(record("a", number), to: first, lastActive: 30) }
        #expect(first.logRowCount == 5)
        first.close()

        // As after `kill -9` before a move: the records are in the log only.
        let reopened = try Self.open(path, moveThreshold: 1_000)
        #expect(reopened.logRowCount == 5, "the tail is read from the file")
        #expect(try reopened.load("a")?.records == (1...5).map { record("a", $0) })
        #expect(try reopened.sessionCount() == 1)
        #expect(try reopened.sessions(lastActiveBefore: 31, limit: 5) == ["a"])
        #expect(try reopened.sessions(lastActiveBefore: 30, limit: 5) == [])
        #expect(failureKind(appendWaiting(record("a", 5), to: reopened)) == .outOfOrder)
        #expect(failureKind(appendWaiting(record("a", 6), to: reopened)) == nil)
        reopened.close()

        let moving = try Self.open(path, moveThreshold: 1)
        defer { moving.close() }
        #expect(failureKind(appendWaiting(record("a", 7), to: moving)) == nil)
        moving.flush()  // the move runs after the batch's completions, before the writer takes the next batch
        #expect(moving.logRowCount == 0, "moved after the batch")
        #expect(try moving.load("a")?.records == (1...7).map { record("a", $0) })
        #expect(try moving.sessions(lastActiveBefore: 31, limit: 5) == ["a"])
    }

    @Test func aVersionOneFileIsUpgradedWithEveryRecordKept() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        do {
            // A file as the build before the shared log wrote it.
            let old = try SQLiteConnection(path: path, create: true, readOnly: false)
            try SQLiteSchema.configure(old, durability: .process)
            try old.execute(SQLiteSchema.creation)
            try old.execute(
                "INSERT INTO sessions (id, last_number, last_active) VALUES ('a', 3, 50);"
                    + "INSERT INTO records (session, number, body) VALUES ('a', 1, '{\"input\":1}'), "
                    + "('a', 2, '{\"input\":2}'), ('a', 3, '{\"input\":3}');")
            #expect(try old.integer("PRAGMA user_version") == 1)
        }
        let store = try Self.open(path, moveThreshold: 2)
        defer { store.close() }
        #expect(try store.writerPragma("PRAGMA user_version") == 2)
        #expect(try store.load("a")?.records == (1...3).map { record("a", $0) })
        #expect(failureKind(appendWaiting(record("a", 3), to: store)) == .outOfOrder)
        for number in 4...6 { #expect(failureKind(appendWaiting(record("a", number), to: store)) == nil) }
        #expect(try store.load("a")?.records == (1...6).map { record("a", $0) })
        #expect(try store.sessions(lastActiveBefore: 51, limit: 5) == ["a"])
    }

    @Test func readsRacingAppendsAndMovesSeeEveryCompletedRecordWithNoGap() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = try Self.open(directory.path + "/sessions.sqlite", moveThreshold: 8)
        defer { store.close() }
        let sessions = ["s0", "s1", "s2", "s3"]
        let perSession = 150
        let completed = Locked([String: Int]())
        let problems = Locked([String]())
        let done = Locked(false)
        let rounds = Locked(0)
        let reading = DispatchGroup()
        for reader in 0..<2 {
            DispatchQueue.global().async(group: reading) {
                var round = 0
                while !done.withLock({ $0 }) {
                    round += 1
                    rounds.withLock { $0 += 1 }
                    let session = sessions[(round + reader) % sessions.count]
                    let before = completed.withLock { $0[session] ?? 0 }
                    do {
                        let numbers = try store.load(session)?.records.map(\.number) ?? []
                        let isGapFree = numbers == (0..<numbers.count).map { $0 + 1 }
                        if !isGapFree || numbers.count < before {
                            problems.withLock { $0.append("\(session): \(before) completed, read \(numbers)") }
                        }
                    } catch {
                        problems.withLock { $0.append("\(session): \(error)") }
                    }
                    // Not a busy loop: timing tests of other suites share these two cores.
                    usleep(100)
                }
            }
        }
        // The writers start once both readers are reading.
        while rounds.withLock({ $0 }) < 2 { usleep(100) }
        let readsBefore = rounds.withLock { $0 }
        let writing = DispatchGroup()
        for session in sessions {
            DispatchQueue.global().async(group: writing) {
                for number in 1...perSession {
                    if failureKind(appendWaiting(record(session, number), to: store)) != nil {
                        problems.withLock { $0.append("\(session) \(number) failed") }
                    }
                    completed.withLock { $0[session] = number }
                }
            }
        }
        writing.wait()
        done.withLock { $0 = true }
        reading.wait()
        #expect(rounds.withLock { $0 } - readsBefore > 100, "the reads raced the writes")
        #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0 }.prefix(5))")
        #expect(store.moveCount > 10, "\(store.moveCount) moves")
        for session in sessions {
            #expect(try store.load(session)?.records == (1...perSession).map { record(session, $0) })
        }
    }

    @Test func theWriteAheadLogIsCheckpointedAndStartsAgainInsteadOfGrowing() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let store = try SQLiteSessionStore(
            path: path, durability: .process,
            testing: SQLiteSessionStore.TestingOptions(logMoveThreshold: 50, logMoveSlice: .max, checkpointFrames: 16))
        defer { store.close() }
        // Each append waited for is a commit of its own: at least one frame each, 400 without a checkpoint.
        for number in 1...400 { appendWaiting(record("a", number, bodySize: 300), to: store) }
        let walBytes = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        #expect(walBytes < 100 * 4_120, "the write-ahead log is \(walBytes) bytes")
        #expect(try store.load("a")?.records.count == 400)
    }

    @Test func aSnapshotDropsTheRecordsItStandsForFromTheLogWithoutMovingTheRest() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let store = try Self.open(path, moveThreshold: 1_000)
        for number in 1...10 { appendWaiting(record("a", number), to: store, lastActive: 70) }
        for number in 1...3 { appendWaiting(record("b", number), to: store, lastActive: 80) }
        let snapshot = StoredSnapshot(number: 6, body: Array("{\"n\":6}".utf8))
        try store.saveSnapshot(snapshot, of: "a")
        #expect(store.logRowCount == 7, "a's records 1-6 left the log; 7-10 and b's stay there")
        let expected = StoredSession(snapshot: snapshot, records: (7...10).map { record("a", $0) })
        #expect(try store.load("a") == expected)
        try store.removeRecords([10], of: "a")
        #expect(store.logRowCount == 6)
        #expect(failureKind(appendWaiting(record("a", 10), to: store)) == .outOfOrder, "a removed last record")
        #expect(failureKind(appendWaiting(record("a", 11), to: store)) == nil)
        // A touch takes the session's rows out of the log, so that their activity does not count again later.
        try store.touch("a", at: 5)
        #expect(store.logRowCount == 3)
        #expect(try store.sessions(lastActiveBefore: 6, limit: 5) == ["a"])
        store.close()

        let reopened = try Self.open(path, moveThreshold: 1)
        defer { reopened.close() }
        #expect(try reopened.load("a")?.records.map(\.number) == [7, 8, 9, 11])
        #expect(try reopened.load("a")?.snapshot == snapshot)
        #expect(try reopened.load("b")?.records == (1...3).map { record("b", $0) })
        #expect(try reopened.sessions(lastActiveBefore: 6, limit: 5) == ["a"])
        #expect(failureKind(appendWaiting(record("b", 4), to: reopened)) == nil)
        reopened.flush()
        #expect(reopened.logRowCount == 0)
        #expect(try reopened.sessions(lastActiveBefore: 81, limit: 5) == ["a", "b"], "the move kept a's touch")
    }

    @Test func aSweepsTouchesOfManySessionsAreOneCommit() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = try Self.open(directory.path + "/sessions.sqlite", moveThreshold: 1_000)
        defer { store.close() }
        let sessions = (0..<40).map { "s\($0)" }
        for session in sessions { appendWaiting(record(session, 1), to: store, lastActive: 500) }
        let before = store.commitCount
        try store.touch(sessions.enumerated().map { SessionActivity(session: $1, time: Int64($0)) } + [
            SessionActivity(session: "unknown", time: 1)
        ])
        #expect(store.commitCount == before + 1, "one transaction, at machine durability one sync, for the sweep")
        #expect(try store.sessions(lastActiveBefore: 10, limit: 100) == Array(sessions.prefix(10)))
        #expect(try store.sessionCount() == 40, "a touch creates no session")
    }

    @Test func anotherProgramsAppendsToTheSameFileAreFoundAndFenced() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let mine = try Self.open(path, moveThreshold: 1_000)
        defer { mine.close() }
        let theirs = try Self.open(path, moveThreshold: 1_000)
        defer { theirs.close() }
        for number in 1...3 { appendWaiting(record("b", number), to: theirs) }
        appendWaiting(record("a", 1), to: mine)
        // Their rows are in the log, which this store's tail does not list: the read finds them all the same.
        #expect(try mine.load("b")?.records == (1...3).map { record("b", $0) })
        #expect(try theirs.load("a")?.records == [record("a", 1)])
        // The writer sees the file changed under it, and fences on what the file holds.
        #expect(failureKind(appendWaiting(record("b", 3), to: mine)) == .outOfOrder)
        #expect(failureKind(appendWaiting(record("b", 4), to: mine)) == nil)
        #expect(failureKind(appendWaiting(record("b", 4), to: theirs)) == .outOfOrder)
        #expect(try theirs.load("b")?.records == (1...4).map { record("b", $0) })
    }
}
