// A server's sessions made from shared settings, their output taken by a receiver object (docs/GUIDE.md, section 14).

import MVVMR
import Synchronization
import Testing

/// One client as a server holds it: its session, made from the server's shared settings, reports to it.
final class Client: SessionOutputReceiver {
    let session: PageSession
    let records = Mutex<[InputRecord]>([])
    init(settings: PageSessionSettings) {
        session = PageSession(settings: settings)
        session.setReceiver(self, for: [.records, .topics])  // what it is handed; the rest is not made
    }
    func sessionRecorded(_ record: InputRecord, events: [SessionEvent]) { records.withLock { $0.append(record) } }
    func sessionProduced(_ event: SessionEvent) {}
    func sessionTopicChanged(_ event: TopicEvent) {}
}

@Suite struct SharedSettingsExampleTests {
    @Test func clientsMadeFromSharedSettingsRecordTheirOwnInputs() throws {
        let settings = PageSessionSettings(
            registry: UnitRegistry(root: .todo, units: [.todo]), services: exampleServices(), historyByteLimit: 65_536)
        let first = Client(settings: settings), second = Client(settings: settings)
        defer { for client in [first, second] { client.session.releaseAll() } }
        try first.session.start()
        try second.session.start()
        try first.session.perform("add", value: ["title": "Buy milk"], on: "todo")
        #expect(first.records.withLock { $0.map(\.number) } == [1, 2])
        #expect(second.records.withLock { $0.map(\.number) } == [1])
    }
}
