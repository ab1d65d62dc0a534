import JSONPatch
import Locking
import MVVMR
import Testing

@testable import MVVMRServer

/// A store that holds every append until the test completes it, and keeps the records it was given.
final class HeldAppendsStore: ForwardingSessionStore {
    typealias Completion = @Sendable (Result<Void, SessionStoreError>) -> Void

    private let held = Locked<[(record: StoredRecord, completion: Completion)]>([])
    /// Where everything but appends goes.
    let inner = MemorySessionStore()

    var durability: SessionDurability { .process }
    var keepsSessions: Bool { true }

    /// The numbers of every record appended so far, completed or not.
    var appendedNumbers: [Int] { held.withLock { $0.map(\.record.number) } }

    func append(
        _ record: StoredRecord, lastActive: Int64, completion: @escaping Completion
    ) {
        held.withLock { $0.append((record, completion)) }
    }

    /// Completes the append of record `number` with `outcome`.
    func complete(_ number: Int, with outcome: Result<Void, SessionStoreError>) {
        let completion = held.withLock { held in held.first { $0.record.number == number }?.completion }
        completion?(outcome)
    }

    func flush() {}
    func close() {}
}

/// A session whose append failed is spoiled: it is ahead of its log, and the server restores it from the store.
@Suite struct SpoiledSessionTests {
    @Test func aSpoiledSessionAppendsNoMoreRecordsAndAnswersNothingAsStored() throws {
        let store = HeldAppendsStore()
        let session = ServerSession(
            identifier: SessionIdentifier.generate(), registry: UnitRegistry(root: .echo, units: [.echo]),
            services: Services(), store: store)
        try session.pages.start()
        store.complete(1, with: .success(()))
        try session.pages.perform("text", value: "kept in memory only", on: "echo")
        store.complete(2, with: .failure(SessionStoreError(.unavailable, "the disk is full")))
        #expect(session.isSpoiled)

        // A request that found the session before it was spoiled acts on it now: its input stays out of the
        // store (the restored session's own records take those numbers), and its answer is a refusal.
        let late = try session.pages.perform("text", value: "never stored", on: "echo")
        #expect(late.inputNumber == 3)
        #expect(store.appendedNumbers == [1, 2])
        guard case .failed = session.durability(of: late.inputNumber, notify: { _ in }) else {
            Issue.record("the late input counts as stored")
            return
        }
    }
}
