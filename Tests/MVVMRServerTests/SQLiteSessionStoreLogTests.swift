import Foundation
import Locking
import MVVMR
import Testing

@testable import MVVMRServer

/// The SQLite store's layout: appends go to one shared log, each row chained to its session's previous one, and the
/// writer notes the log's latest rows in `sessions` now and then. Wherever a session's newest row is known, a read
/// finds every completed append, in number order, with no gap.
@Suite struct SQLiteSessionStoreLogTests {
    private static func open(
        _ path: String, noteThreshold: Int, sweepEvery: Int = SQLiteSessionStore.defaultLogSweepEvery
    ) throws -> SQLiteSessionStore {
        try SQLiteSessionStore(
            path: path, durability: .process,
            testing: SQLiteSessionStore.TestingOptions(
                logNoteThreshold: noteThreshold, logNoteSlice: .max, logSweepEvery: sweepEvery))
    }

    /// How many rows of `session` the log holds, read through `file`, a connection of the test's own.
    private static func rowCount(of session: String, in file: SQLiteConnection) throws -> Int64? {
        try file.integer("SELECT count(*) FROM log WHERE session = '\(session)'")
    }

    @Test func recordsInTheTailAndRecordsNotedInSessionsLoadAsOneChain() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = try Self.open(directory.path + "/sessions.sqlite", noteThreshold: 4)
        defer { store.close() }
        for number in 1...10 {
            #expect(failureKind(appendWaiting(record("a", number), to: store)) == nil)
            if number <= 7 { #expect(failureKind(appendWaiting(record("b", number), to: store)) == nil) }
            store.flush()
            // Some of a's records are noted in its row by now, the latest only in the tail.
            #expect(try store.load("a")?.records == (1...number).map { record("a", $0) })
        }
        #expect(store.noteCount >= 3, "the log was noted \(store.noteCount) times")
        #expect(store.logRowCount < 4)
        #expect(try store.load("b")?.records == (1...7).map { record("b", $0) })
        #expect(try store.sessionCount() == 2)
        #expect(failureKind(appendWaiting(record("a", 10), to: store)) == .outOfOrder, "the fence knows noted records")
    }

    @Test func aLongTailIsNotedOldestRowsFirstASliceAtATime() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = try SQLiteSessionStore(
            path: directory.path + "/sessions.sqlite", durability: .process,
            testing: SQLiteSessionStore.TestingOptions(logNoteThreshold: 20, logNoteSlice: 5))
        defer { store.close() }
        for number in 1...40 {
            appendWaiting(record("a", number), to: store, lastActive: Int64(number))
            appendWaiting(record("b", number), to: store, lastActive: 100)
            store.flush()
            #expect(store.logRowCount < 21, "a noting of 5 follows every batch that left 20 or more")
            #expect(try store.load("a")?.records == (1...number).map { record("a", $0) })
        }
        #expect(store.noteCount >= 10)
        #expect(store.logRowCount >= 15, "only the oldest rows were noted")
        #expect(try store.load("b")?.records == (1...40).map { record("b", $0) })
        #expect(failureKind(appendWaiting(record("a", 40), to: store)) == .outOfOrder)
        #expect(try store.sessions(lastActiveBefore: 41, limit: 5) == ["a"])
        #expect(try store.sessionCount() == 2)
    }

    @Test func aReopenedFileFindsTheRecordsLeftInTheLogAndTheNumberingGoesOn() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let first = try Self.open(path, noteThreshold: 1_000)
        for number in 1...5 { appendWaiting(record("a", number), to: first, lastActive: 30) }
        #expect(first.logRowCount == 5)
        first.close()

        // As after `kill -9` before a noting: the session has no row in `sessions`, only its records.
        let reopened = try Self.open(path, noteThreshold: 1_000)
        #expect(reopened.logRowCount == 5, "the tail is read from the file")
        #expect(try reopened.load("a")?.records == (1...5).map { record("a", $0) })
        #expect(try reopened.sessionCount() == 1)
        #expect(try reopened.sessions(lastActiveBefore: 31, limit: 5) == ["a"])
        #expect(try reopened.sessions(lastActiveBefore: 30, limit: 5) == [])
        #expect(failureKind(appendWaiting(record("a", 5), to: reopened)) == .outOfOrder)
        #expect(failureKind(appendWaiting(record("a", 6), to: reopened)) == nil)
        reopened.close()

        let noting = try Self.open(path, noteThreshold: 1)
        defer { noting.close() }
        #expect(failureKind(appendWaiting(record("a", 7), to: noting)) == nil)
        noting.flush()  // the noting runs after the batch's completions, before the writer takes the next batch
        #expect(noting.logRowCount == 0, "noted after the batch")
        #expect(try noting.load("a")?.records == (1...7).map { record("a", $0) })
        #expect(try noting.sessions(lastActiveBefore: 31, limit: 5) == ["a"])
    }

    @Test func aVersionOneFileIsUpgradedWithEveryRecordKept() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        do {
            // A file as the build before the shared log wrote it.
            let old = try SQLiteConnection(path: path, create: true, readOnly: false)
            try SQLiteSchema.configure(old, durability: .process)
            try old.execute(SQLiteSchema.versionOneCreation)
            try old.execute(
                "INSERT INTO sessions (id, last_number, last_active) VALUES ('a', 3, 50);"
                    + "INSERT INTO records (session, number, body) VALUES ('a', 1, '{\"input\":1}'), "
                    + "('a', 2, '{\"input\":2}'), ('a', 3, '{\"input\":3}');")
            #expect(try old.integer("PRAGMA user_version") == 1)
        }
        let store = try Self.open(path, noteThreshold: 2)
        defer { store.close() }
        #expect(try store.writerPragma("PRAGMA user_version") == 3)
        #expect(try store.load("a")?.records == (1...3).map { record("a", $0) })
        #expect(failureKind(appendWaiting(record("a", 3), to: store)) == .outOfOrder)
        for number in 4...6 { #expect(failureKind(appendWaiting(record("a", number), to: store)) == nil) }
        #expect(try store.load("a")?.records == (1...6).map { record("a", $0) })
        #expect(try store.sessions(lastActiveBefore: 51, limit: 5) == ["a"])
    }

    @Test func aVersionTwoFileIsUpgradedWithEveryRecordKeptAndItsRecordsChained() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        do {
            // A file as the build before the chained log wrote it: a's oldest records and b's snapshot moved into
            // `records`, their newer records and all of c's still in the old log, whose rows 1-4 were moved.
            let old = try SQLiteConnection(path: path, create: true, readOnly: false)
            try SQLiteSchema.configure(old, durability: .process)
            try old.execute(SQLiteSchema.versionOneCreation)
            try old.execute(SQLiteSchema.versionTwoLog + "PRAGMA user_version = 2;")
            try old.execute(
                "INSERT INTO sessions (id, last_number, last_active, snapshot_number, snapshot) VALUES "
                    + "('a', 2, 40, NULL, NULL), ('b', 3, 45, 2, '{\"n\":2}');"
                    + "INSERT INTO records (session, number, body) VALUES ('a', 1, '{\"input\":1}'), "
                    + "('a', 2, '{\"input\":2}'), ('b', 3, '{\"input\":3}');"
                    + "INSERT INTO log (seq, session, number, last_active, body) VALUES "
                    + "(5, 'a', 3, 60, '{\"input\":3}'), (6, 'c', 1, 61, '{\"input\":1}'), "
                    + "(7, 'a', 4, 62, '{\"input\":4}'), (8, 'c', 2, 63, '{\"input\":2}');"
                    + "UPDATE log_state SET moved_through = 4;")
        }
        let store = try Self.open(path, noteThreshold: 1_000)
        #expect(try store.writerPragma("PRAGMA user_version") == 3)
        #expect(try store.load("a")?.records == (1...4).map { record("a", $0) })
        #expect(try store.load("b") == StoredSession(
            snapshot: StoredSnapshot(number: 2, body: Array("{\"n\":2}".utf8)), records: [record("b", 3)]))
        #expect(try store.load("c")?.records == (1...2).map { record("c", $0) })
        #expect(store.logRowCount == 4, "the old log's rows are the tail")
        #expect(try store.sessionCount() == 3)
        #expect(try store.sessions(lastActiveBefore: 50, limit: 5) == ["b"])
        #expect(failureKind(appendWaiting(record("a", 4), to: store)) == .outOfOrder)
        #expect(failureKind(appendWaiting(record("a", 5), to: store)) == nil)
        #expect(failureKind(appendWaiting(record("b", 4), to: store)) == nil)
        try store.removeRecords([2, 4], of: "a")
        #expect(try store.load("a")?.records.map(\.number) == [1, 3, 5])
        store.close()

        let reopened = try Self.open(path, noteThreshold: 1)
        defer { reopened.close() }
        #expect(try reopened.load("a")?.records.map(\.number) == [1, 3, 5])
        #expect(try reopened.load("b")?.records.map(\.number) == [3, 4])
        #expect(failureKind(appendWaiting(record("c", 3), to: reopened)) == nil)
        reopened.flush()
        #expect(reopened.logRowCount == 0)
        #expect(try reopened.load("c")?.records == (1...3).map { record("c", $0) })
        #expect(try reopened.sessionCount() == 3)
    }

    @Test func removingRecordsAnywhereInAChainLinksTheRestAndDeletesTheirRows() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        // Noted every 4 rows: a's records are partly noted in its row, partly only in the tail, and b's interleave.
        let store = try Self.open(path, noteThreshold: 4)
        for number in 1...12 {
            appendWaiting(record("a", number), to: store)
            if number <= 6 { appendWaiting(record("b", number), to: store) }
            store.flush()
        }
        // The newest (12, in the tail), one in the middle of the noted rows (5), a run (7-9) and the first (1).
        try store.removeRecords([1, 5, 7, 8, 9, 12], of: "a")
        let kept = [2, 3, 4, 6, 10, 11]
        #expect(try store.load("a")?.records.map(\.number) == kept)
        #expect(failureKind(appendWaiting(record("a", 12), to: store)) == .outOfOrder, "12 was taken")
        #expect(failureKind(appendWaiting(record("a", 13), to: store)) == nil)
        #expect(try store.load("a")?.records.map(\.number) == kept + [13])
        // A snapshot drops the chain's start; it ends on record 6, with 10 and on kept.
        try store.saveSnapshot(StoredSnapshot(number: 6, body: Array("{}".utf8)), of: "a")
        #expect(try store.load("a")?.records.map(\.number) == [10, 11, 13])
        #expect(try store.load("b")?.records == (1...6).map { record("b", $0) })
        try store.delete("b")
        #expect(try store.load("b") == nil)
        // The rows the snapshot stands for (a's 2, 3, 4 and 6) are dead, not gone: the sweep takes them.
        try store.noteAndSweepWholeLog()
        #expect(try store.load("a")?.records.map(\.number) == [10, 11, 13])
        store.close()

        // Every removed record's row left the file: the log holds a's three rows and nothing of b.
        let file = try SQLiteConnection(path: path, create: false, readOnly: true)
        #expect(try file.integer("SELECT count(*) FROM log") == 3)
        #expect(try Self.rowCount(of: "b", in: file) == 0)
        let reopened = try Self.open(path, noteThreshold: 1)
        defer { reopened.close() }
        #expect(try reopened.load("a")?.records.map(\.number) == [10, 11, 13])
        #expect(failureKind(appendWaiting(record("a", 14), to: reopened)) == nil)
        #expect(try reopened.load("a")?.records.map(\.number) == [10, 11, 13, 14])
    }

    @Test func readsRacingAppendsAndNotingsSeeEveryCompletedRecordWithNoGap() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = try Self.open(directory.path + "/sessions.sqlite", noteThreshold: 8)
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
        #expect(store.noteCount > 10, "\(store.noteCount) notings")
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
            testing: SQLiteSessionStore.TestingOptions(logNoteThreshold: 50, logNoteSlice: .max, checkpointFrames: 16))
        defer { store.close() }
        // Each append waited for is a commit of its own: two frames or more each (the leaf and the file's first
        // page), 800 and more without a checkpoint. The checkpointer's thread copies the log while the writer goes
        // on; the writer copies it itself once it grew to eight times 16 frames all the same (about 130 frames at
        // most when measured; a checkpoint that finds the checkpointer's under way is tried again after the next
        // commit, so a loaded machine may see a few more).
        for number in 1...400 { appendWaiting(record("a", number, bodySize: 300), to: store) }
        let walBytes = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        let frameBytes = 4_096 + 24
        #expect(walBytes < 400 * frameBytes, "\(walBytes) bytes: the log started again instead of growing")
        #expect(store.backgroundCheckpointCount > 0, "the checkpointer's thread copied the log")
        #expect(try store.load("a")?.records.count == 400)
    }

    @Test func aLogThatCannotStartAgainIsNotCheckpointedAfterEveryCommit() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let store = try SQLiteSessionStore(
            path: path, durability: .process,
            testing: SQLiteSessionStore.TestingOptions(logNoteThreshold: 10_000, logNoteSlice: .max, checkpointFrames: 16))
        defer { store.close() }
        appendWaiting(record("a", 1), to: store)
        // A reader in an open transaction holds the log's frames: no checkpoint can copy them, so the log cannot start
        // again and grows with every commit, as it does under a steady load while the writer commits during each
        // checkpoint. Asked after every commit past 16 frames, the checkpointer ran 368 passes (four per request) by
        // the time the log reached eight times 16 frames and the writer took over; asked once per 8 new frames, it runs
        // at most four passes per 8 frames.
        let reader = try SQLiteConnection(path: path, create: false, readOnly: true)
        try reader.execute("BEGIN")
        #expect(try reader.integer("SELECT count(*) FROM log") == 1)
        for number in 2...200 { appendWaiting(record("a", number, bodySize: 300), to: store) }
        let passes = store.backgroundCheckpointCount
        #expect(passes > 0, "the checkpointer was asked")
        #expect(passes <= 4 * (128 - 16) / 8 + 8, "\(passes) checkpoint passes for a log growing to 128 frames")
        try reader.execute("COMMIT")
        #expect(try store.load("a")?.records.count == 200)
    }

    @Test func aSnapshotDropsTheRecordsItStandsForAndATouchNotesTheRest() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let store = try Self.open(path, noteThreshold: 1_000)
        for number in 1...10 { appendWaiting(record("a", number), to: store, lastActive: 70) }
        for number in 1...3 { appendWaiting(record("b", number), to: store, lastActive: 80) }
        let snapshot = StoredSnapshot(number: 6, body: Array("{\"n\":6}".utf8))
        try store.saveSnapshot(snapshot, of: "a")
        // a's records 1-6 are dead (every read of the chain stops at the snapshot) and stay in the tail, like 7-10
        // and b's, until they are noted; the sweep takes them once they are.
        #expect(store.logRowCount == 13)
        let expected = StoredSession(snapshot: snapshot, records: (7...10).map { record("a", $0) })
        #expect(try store.load("a") == expected)
        try store.removeRecords([10], of: "a")
        #expect(store.logRowCount == 12)
        #expect(failureKind(appendWaiting(record("a", 10), to: store)) == .outOfOrder, "a removed last record")
        #expect(failureKind(appendWaiting(record("a", 11), to: store)) == nil)
        // A touch notes the session's rows in its row and takes them out of the tail, so that their activity does not
        // count again later, not even once the file is reopened.
        try store.touch("a", at: 5)
        #expect(store.logRowCount == 3)
        #expect(try store.sessions(lastActiveBefore: 6, limit: 5) == ["a"])
        store.close()

        let reopened = try Self.open(path, noteThreshold: 1)
        defer { reopened.close() }
        #expect(reopened.logRowCount == 3, "b's three rows; a's were noted by the touch")
        #expect(try reopened.load("a")?.records.map(\.number) == [7, 8, 9, 11])
        #expect(try reopened.load("a")?.snapshot == snapshot)
        #expect(try reopened.load("b")?.records == (1...3).map { record("b", $0) })
        #expect(try reopened.sessions(lastActiveBefore: 6, limit: 5) == ["a"])
        #expect(failureKind(appendWaiting(record("b", 4), to: reopened)) == nil)
        reopened.flush()
        #expect(reopened.logRowCount == 0)
        #expect(try reopened.sessions(lastActiveBefore: 81, limit: 5) == ["a", "b"], "the noting kept a's touch")
    }

    @Test func aSweepsTouchesOfManySessionsAreOneCommit() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = try Self.open(directory.path + "/sessions.sqlite", noteThreshold: 1_000)
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
        let mine = try Self.open(path, noteThreshold: 1_000)
        defer { mine.close() }
        let theirs = try Self.open(path, noteThreshold: 1_000)
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

    @Test func deletingTheLogsNewestRowsHandsNoNumberOutAgainSoAnotherStoreStillFindsNewRows() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let first = try Self.open(path, noteThreshold: 1_000)
        defer { first.close() }
        let second = try Self.open(path, noteThreshold: 1_000)
        defer { second.close() }
        appendWaiting(record("a", 1), to: first)
        appendWaiting(record("a", 2), to: first)
        // The second store's tail is read again at its delete, and knows the log's rows up to 2; then they go.
        try second.delete("a")
        // A store opened now, on a log with no rows, numbers its first row past them.
        let third = try Self.open(path, noteThreshold: 1_000)
        defer { third.close() }
        appendWaiting(record("c", 1), to: third)
        let file = try SQLiteConnection(path: path, create: false, readOnly: true)
        #expect(try file.integer("SELECT seq FROM log WHERE session = 'c'") == 3, "numbers 1 and 2 stay used")
        #expect(try second.load("c")?.records == [record("c", 1)], "c's row is past every number the second knew")
        #expect(try first.load("a") == nil)
    }

    @Test func aNotingFindsNoRowsOnceTheirSessionsWereRemovedAndIsNotRepeated() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = try Self.open(directory.path + "/sessions.sqlite", noteThreshold: 2)
        defer { store.close() }
        // One batch appends two rows and removes them: two rows to note, none left to note.
        store.suspendWriting()
        let appended = Locked(0)
        for number in 1...2 {
            store.append(record("c", number), lastActive: 0) { result in
                if case .success = result { appended.withLock { $0 += 1 } }
            }
        }
        let removing = DispatchGroup()
        DispatchQueue.global().async(group: removing) { try? store.removeRecords([1, 2], of: "c") }
        // The removal is queued behind the appends before the writer takes them.
        while store.queuedWriteCount < 3 { usleep(1_000) }
        store.resumeWriting()
        removing.wait()
        store.flush()
        #expect(appended.withLock { $0 } == 2)
        let notings = store.noteCount
        for _ in 1...3 { store.flush() }
        #expect(store.noteCount == notings, "the noting went past the removed rows and found nothing more to note")
        #expect(try store.load("c")?.records == [])
        #expect(failureKind(appendWaiting(record("c", 3), to: store)) == nil)
    }

    @Test func theSweepTakesEveryDeadRowAndNoLiveOneWhateverTheSessionsDid() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        // Noted after every 3 rows and swept after every 2: the sweep's rounds meet chains in every state, with rows
        // in the tail and rows noted, snapshots, removals and deletions between them, and reopened files.
        func open() throws -> SQLiteSessionStore {
            try Self.open(path, noteThreshold: 3, sweepEvery: 2)
        }
        struct Expected {
            var lastNumber = 0
            var snapshot: Int?
            var kept: [Int] = []
        }
        var store = try open()
        var random = SessionRandom(seed: 7)
        var expected: [String: Expected] = [:]
        // A deleted session's id is never used again (the server's ids are random), so each slot takes a new one.
        var generation = [0, 0, 0, 0]
        func id(_ slot: Int) -> String { "s\(slot)-\(generation[slot])" }
        func check(_ session: String, _ step: Int) throws {
            let loaded = try store.load(session)
            let wanted = expected[session] ?? Expected()
            #expect(loaded?.records.map(\.number) ?? [] == wanted.kept, "step \(step), \(session)")
            #expect(loaded?.snapshot?.number == wanted.snapshot, "step \(step), \(session)")
        }
        for step in 0..<800 {
            let slot = Int.random(in: 0..<4, using: &random)
            let session = id(slot)
            var state = expected[session] ?? Expected()
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<70:
                state.lastNumber += 1
                #expect(failureKind(appendWaiting(record(session, state.lastNumber), to: store)) == nil)
                state.kept.append(state.lastNumber)
            case 70..<80 where state.lastNumber > 0:
                let number = Int.random(in: (state.snapshot ?? 0)...state.lastNumber, using: &random)
                try store.saveSnapshot(StoredSnapshot(number: number, body: Array("{}".utf8)), of: session)
                state.snapshot = number
                state.kept.removeAll { $0 <= number }
            case 80..<88 where !state.kept.isEmpty:
                let removed = Set((0..<2).compactMap { _ in state.kept.randomElement(using: &random) })
                try store.removeRecords(Array(removed), of: session)
                state.kept.removeAll { removed.contains($0) }
            case 88..<92:
                try store.delete(session)
                generation[slot] += 1
                expected[session] = nil
                try check(session, step)
                continue
            case 92..<94:
                store.close()
                store = try open()
            default:
                store.flush()
            }
            expected[session] = state
            try check(session, step)
        }
        for session in expected.keys { try check(session, -1) }
        #expect(store.sweepCount > 20, "\(store.sweepCount) sweeps since the last reopening")

        // Once the whole log was swept, the file holds the live records' rows and nothing else.
        try store.noteAndSweepWholeLog()
        for session in expected.keys { try check(session, -2) }
        store.close()
        let file = try SQLiteConnection(path: path, create: false, readOnly: true)
        let live = expected.values.reduce(0) { $0 + $1.kept.count }
        #expect(try file.integer("SELECT count(*) FROM log") == Int64(live))
        for (session, state) in expected {
            let rows = try Self.rowCount(of: session, in: file)
            #expect(rows == Int64(state.kept.count), "\(session)")
        }
    }

    @Test func theWriterSweepsTheRowsASnapshotStandsForOutOfTheFileAsTheLogGrows() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let store = try Self.open(path, noteThreshold: 4, sweepEvery: 8)
        defer { store.close() }
        for number in 1...40 { appendWaiting(record("a", number), to: store) }
        try store.saveSnapshot(StoredSnapshot(number: 40, body: Array("{}".utf8)), of: "a")
        let file = try SQLiteConnection(path: path, create: false, readOnly: true)
        #expect(try Self.rowCount(of: "a", in: file) == 40, "dead, not yet swept")
        // Each sweep goes through twice the rows appended since the one before: b's 60 take the sweep past a's 40.
        let sweeps = store.sweepCount
        for number in 1...60 { appendWaiting(record("b", number), to: store) }
        #expect(store.sweepCount - sweeps >= 7)
        #expect(try Self.rowCount(of: "a", in: file) == 0)
        #expect(try Self.rowCount(of: "b", in: file) == 60)
        #expect(try store.load("a") == StoredSession(snapshot: StoredSnapshot(number: 40, body: Array("{}".utf8)), records: []))
        #expect(failureKind(appendWaiting(record("a", 41), to: store)) == nil, "a's chain goes on past its swept rows")
        #expect(try store.load("a")?.records.map(\.number) == [41])
    }

    @Test func rowsThatDiedInTheTailAreSweptOnceTheyAreNoted() throws {
        let directory = try TemporaryStoreDirectory()
        defer { directory.remove() }
        let path = directory.path + "/sessions.sqlite"
        let store = try Self.open(path, noteThreshold: 20, sweepEvery: 4)
        defer { store.close() }
        for number in 1...10 { appendWaiting(record("a", number), to: store) }
        // a's ten rows die while only the tail lists them: the sweep's rounds end at the noted log, before them.
        try store.saveSnapshot(StoredSnapshot(number: 10, body: Array("{}".utf8)), of: "a")
        for number in 1...6 { appendWaiting(record("b", number), to: store) }
        let file = try SQLiteConnection(path: path, create: false, readOnly: true)
        #expect(try Self.rowCount(of: "a", in: file) == 10)
        // Once the noting takes them, a later round goes past them.
        for number in 7...40 { appendWaiting(record("b", number), to: store) }
        #expect(store.noteCount >= 1)
        #expect(try Self.rowCount(of: "a", in: file) == 0)
        #expect(try store.load("a")?.records == [])
        #expect(try store.load("b")?.records.count == 40)
    }
}
