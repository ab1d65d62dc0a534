import JSONPatch
import Locking
import MVVMR
import Testing

@testable import MVVMRServer

/// A NATS store that runs a step of the test's once, right after a load: where another node's write can fall between
/// a restore's load and the copy it makes from it.
final class AfterLoadStore: ForwardingSessionStore {
    let inner: NATSSessionStore
    private let afterLoad = Locked<(@Sendable () -> Void)?>(nil)

    init(_ inner: NATSSessionStore) { self.inner = inner }

    /// Runs `step` after the next load, once.
    func once(afterLoad step: @escaping @Sendable () -> Void) { afterLoad.withLock { $0 = step } }

    func load(_ session: String) throws(SessionStoreError) -> StoredSession? {
        let loaded = try inner.load(session)
        afterLoad.withLock { step in defer { step = nil }; return step }?()
        return loaded
    }
}

/// Two nodes on one JetStream store: a node that restores a session claims it as it loaded it, so that its copy
/// never starts behind the store (the balancer may send one session's requests to two nodes at once, around a
/// node's death or a slow connect).
@Suite(.serialized) struct RestoreClaimTests {
    @Test func aRestoreWhoseLoadAnotherNodeWroteAfterLoadsAgainAndFencesThatNodeOut() throws {
        let server = try #require(NATSTestServer.shared)
        let settings = natsSettings(server)
        let firstStore = try NATSSessionStore(settings)
        let secondStore = AfterLoadStore(try NATSSessionStore(settings))
        defer {
            firstStore.close()
            secondStore.close()
        }
        let first = PageServer(units: [.shout], root: .shout, store: firstStore)
        let second = PageServer(units: [.shout], root: .shout, store: secondStore)
        // A session made on the first node, with one input stored.
        let held = ServerSession(
            identifier: SessionIdentifier.generate(), environment: first.sessionEnvironment)
        defer { held.expire(reason: nil) }
        try held.pages.start()
        try held.pages.perform("say", value: "one", on: "shout")
        held.waitUntilStored(held.pages.inputNumber)
        // The second node restores it, and the first node stores another input between its load and its copy.
        let written = Locked(false)
        secondStore.once {
            do {
                try held.pages.perform("say", value: "two", on: "shout")
                held.waitUntilStored(held.pages.inputNumber)
                written.withLock { $0 = !held.isSpoiled }
            } catch {
                Issue.record("the first node's input failed: \(error)")
            }
        }
        let restored = try #require(try second.liveSession(held.identifier))
        defer { restored.expire(reason: nil) }
        #expect(written.withLock { $0 }, "the first node's input was stored before the second node claimed the session")
        #expect(restored.pages.inputNumber == held.pages.inputNumber, "the copy was made from the log with that input")
        #expect(second.claimsRefused.value() == 1, "the first load's claim was refused, the second one's taken")
        // The first node's copy can store nothing more: its next input fails the fence, and it is spoiled.
        try held.pages.perform("say", value: "three", on: "shout")
        held.waitUntilStored(held.pages.inputNumber)
        #expect(held.isSpoiled)
        // The second node's copy goes on, and a third load shows its input after the first node's.
        try restored.pages.perform("say", value: "four", on: "shout")
        restored.waitUntilStored(restored.pages.inputNumber)
        #expect(!restored.isSpoiled)
        let texts = try #require(try firstStore.load(held.identifier)).records.map { String(decoding: $0.body, as: UTF8.self) }
        #expect(texts.count >= 4 && texts[2].contains("\"two\"") && texts[3].contains("\"four\""), "the first node's input, then the second's: \(texts)")
    }
}
