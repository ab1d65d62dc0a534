import Locking
import Testing

@testable import MicroHTTP

// The sharded table of requests waiting for their answers. Named `…ConcurrencyTests` so that CI runs it under
// ThreadSanitizer.

@Suite(.tags(.concurrency)) struct WaitingRequestsConcurrencyTests {
    /// A context for no real connection (the table never touches the connection).
    private static func context() -> RequestContext {
        // swift-format-ignore: NeverForceUnwrap
        RequestContext(connection: ConnectionHandle(pointer: OpaquePointer(bitPattern: 0x10)!))
    }

    @Test func aClosedTableAdmitsNothingAndListsWhatWaits() {
        let table = WaitingRequests()
        let early = Self.context()
        #expect(!table.admit(early))
        table.open()
        let contexts = (0..<50).map { _ in Self.context() }
        for context in contexts { #expect(table.admit(context)) }
        table.remove(contexts[0])
        #expect(!table.isEmpty)
        let listed = table.closeAndList()
        #expect(Set(listed.map(ObjectIdentifier.init)) == Set(contexts.dropFirst().map(ObjectIdentifier.init)))
        #expect(!table.admit(Self.context()))
        for context in contexts.dropFirst() { table.remove(context) }
        #expect(table.isEmpty)
    }

    /// Requests admitted on many threads while the table closes: every one admitted is listed by the close (none is
    /// left unanswered by a stopping server), and every one refused came after it.
    @Test func everyRequestAdmittedBeforeTheCloseIsListedByIt() async {
        for _ in 0..<20 {
            let table = WaitingRequests()
            table.open()
            let admitted = Locked<[ObjectIdentifier]>([])
            let listed = Locked<[ObjectIdentifier]>([])
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        var kept: [RequestContext] = []
                        for _ in 0..<300 {
                            let context = Self.context()
                            if table.admit(context) {
                                kept.append(context)
                                admitted.withLock { $0.append(ObjectIdentifier(context)) }
                            }
                        }
                        // Kept alive to the end of the task, so that no identity is reused while the close lists them.
                        withExtendedLifetime(kept) {}
                    }
                }
                group.addTask {
                    let contexts = table.closeAndList()
                    listed.withLock { $0 = contexts.map(ObjectIdentifier.init) }
                    withExtendedLifetime(contexts) {}
                }
            }
            let admittedSet = Set(admitted.withLock { $0 })
            let listedSet = Set(listed.withLock { $0 })
            #expect(admittedSet == listedSet)
        }
    }
}
