import Testing

@testable import MVVMRServer

/// How a session's log is read when the fence let two writes through (nats-server before 2.9.21 checks the expected
/// last subject sequence of a replicated stream outside the write's agreement): as the one chain the fence meant.
@Suite struct NATSLogFormatTests {
    private static let subject = "mvvmr.log.s"

    /// A record message at `sequence`.
    private func record(_ number: Int, at sequence: UInt64, from node: String = "a") -> NATSStreamMessage {
        NATSStreamMessage(
            sequence: sequence, subject: Self.subject,
            headers: Dictionary(uniqueKeysWithValues: NATSLogFormat.headers(kind: "record", number: number, last: number, floor: 0)),
            body: Array("{\"n\":\(number),\"node\":\"\(node)\"}".utf8))
    }

    /// A claim at `sequence` by a node that read the log up to record `last`, whose last message was at `previous`.
    private func claim(at sequence: UInt64, previous: UInt64, last: Int) -> NATSStreamMessage {
        var headers = Dictionary(uniqueKeysWithValues: NATSLogFormat.headers(kind: "remove", number: 0, last: last, floor: 0))
        headers[NATSLogFormat.owner] = "b"
        headers[NATSLogFormat.previous] = String(previous)
        return NATSStreamMessage(sequence: sequence, subject: Self.subject, headers: headers, body: [])
    }

    private func read(_ messages: [NATSStreamMessage]) throws -> (session: StoredSession, fence: NATSFence) {
        let last = try #require(messages.last)
        return try #require(try NATSLogFormat.session("s", from: messages, through: try NATSLogFormat.fence(after: last)))
    }

    /// Two writes of record 3 that named the same last message were both stored: the first one stands.
    @Test func theSecondWriteOfANumberIsVoid() throws {
        let (session, fence) = try read([record(1, at: 1), record(2, at: 2), record(3, at: 3), record(3, at: 4, from: "b"), record(4, at: 5)])
        #expect(session.records.map(\.number) == [1, 2, 3, 4])
        #expect(session.records[2].body == record(3, at: 3).body)
        #expect(fence.lastNumber == 4 && fence.sequence == 5)
        #expect(fence.recentRecords.map(\.sequence) == [1, 2, 3, 5])
    }

    /// The old copy's record 3 was stored before a claim that named record 2's message: the claim is void, and the
    /// fence stands after record 3 (at the claim's sequence, which the next write must name).
    @Test func aClaimThatAnotherWriteCameBeforeIsVoid() throws {
        let messages = [record(1, at: 10), record(2, at: 11), record(3, at: 12), claim(at: 13, previous: 11, last: 2)]
        #expect(NATSLogFormat.isVoidClaim(messages[3], after: messages[2]))
        let (session, fence) = try read(messages)
        #expect(session.records.map(\.number) == [1, 2, 3])
        #expect(fence.lastNumber == 3 && fence.sequence == 13)
        // The node claims again, from what it read now, and writes on.
        let (again, after) = try read(messages + [claim(at: 14, previous: 13, last: 3), record(4, at: 15, from: "b")])
        #expect(again.records.map(\.number) == [1, 2, 3, 4])
        #expect(after.lastNumber == 4)
    }

    /// A claim written first stands, and so does the old copy's record that got through after it (the new copy's own
    /// first write then fails the fence, and it loads again).
    @Test func aClaimThatCameFirstStandsAndSoDoesTheRecordAfterIt() throws {
        let messages = [record(1, at: 1), record(2, at: 2), claim(at: 3, previous: 2, last: 2), record(3, at: 4)]
        #expect(!NATSLogFormat.isVoidClaim(messages[2], after: messages[1]))
        let (session, fence) = try read(messages)
        #expect(session.records.map(\.number) == [1, 2, 3])
        #expect(fence.lastNumber == 3 && fence.sequence == 4)
    }

    /// Another node's snapshot purged records while they were read: the records read skip some numbers, and the
    /// read is not whole (the store reads again), though the snapshot read last stands for fewer than were lost.
    @Test func aGapInTheRecordsReadIsAPurgeUnderTheRead() throws {
        var snapshotHeaders = Dictionary(uniqueKeysWithValues: NATSLogFormat.headers(kind: "snapshot", number: 5, last: 10, floor: 5))
        snapshotHeaders[NATSLogFormat.kind] = "snapshot"
        let snapshot = NATSStreamMessage(sequence: 11, subject: Self.subject, headers: snapshotHeaders, body: Array("{}".utf8))
        let purgedUnderTheRead = [record(1, at: 1), record(2, at: 2)] + (6...10).map { record($0, at: UInt64($0)) } + [snapshot]
        #expect(try NATSLogFormat.session("s", from: purgedUnderTheRead, through: try NATSLogFormat.fence(after: snapshot)) == nil)
        // Read again after the purge: the snapshot's records and the ones after it.
        let (session, fence) = try read((6...10).map { record($0, at: UInt64($0)) } + [snapshot])
        #expect(session.snapshot?.number == 5)
        #expect(session.records.map(\.number) == [6, 7, 8, 9, 10])
        #expect(fence.lastNumber == 10 && fence.floor == 5)
    }

    /// A claim of an older node (no `Mvvmr-Previous`) stands as before.
    @Test func aClaimWithoutThePreviousHeaderStands() throws {
        var old = claim(at: 3, previous: 0, last: 2)
        var headers = old.headers
        headers[NATSLogFormat.previous] = nil
        old = NATSStreamMessage(sequence: old.sequence, subject: old.subject, headers: headers, body: [])
        #expect(!NATSLogFormat.isVoidClaim(old, after: record(1, at: 1)))
        let (session, fence) = try read([record(1, at: 1), record(2, at: 2), old])
        #expect(session.records.map(\.number) == [1, 2])
        #expect(fence.lastNumber == 2 && fence.sequence == 3)
    }
}
