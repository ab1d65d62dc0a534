import Foundation
import Locking
import Testing

@testable import MVVMRServer

/// The stores the behavioural suite runs against.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
    case memory
    /// SQLite as configured by default: the log's rows are noted in `sessions` once thousands gathered, so reads
    /// find sessions' newest rows in the tail.
    case sqlite
    /// SQLite whose writer notes the log's rows in `sessions` and sweeps the dead ones out of the log after every
    /// batch, so that reads find sessions' newest rows there and chains that end at a row the sweep took.
    case sqliteNotingEveryBatch
    /// NATS JetStream, on a nats-server the test process starts (``NATSTestServer/shared``), under names of its own.
    case nats

    var testDescription: String { rawValue }
}

/// A store under test, with the directory its file lives in (removed by `tearDown()`).
final class StoreFixture: Sendable {
    let store: any SessionStore
    let directory: TemporaryStoreDirectory?

    init(_ kind: StoreKind, durability: SessionDurability = .process) throws {
        switch kind {
        case .memory:
            store = MemorySessionStore()
            directory = nil
        case .sqlite:
            let directory = try TemporaryStoreDirectory()
            self.directory = directory
            store = try SQLiteSessionStore(path: directory.path + "/sessions.sqlite", durability: durability)
        case .sqliteNotingEveryBatch:
            let directory = try TemporaryStoreDirectory()
            self.directory = directory
            store = try SQLiteSessionStore(
                path: directory.path + "/sessions.sqlite", durability: durability,
                testing: SQLiteSessionStore.TestingOptions(logNoteThreshold: 1, logNoteSlice: .max, logSweepEvery: 1))
        case .nats:
            let server = try #require(NATSTestServer.shared, "nats-server could not be started")
            directory = nil
            store = try NATSSessionStore(natsSettings(server))
        }
    }

    /// Runs `body`, whose appends then make one batch of the writer (the memory store has no batches; the NATS store
    /// pipelines them).
    func inOneBatch(_ body: () -> Void) {
        let sqlite = store as? SQLiteSessionStore
        sqlite?.suspendWriting()
        body()
        sqlite?.resumeWriting()
        store.flush()
    }

    func tearDown() {
        store.close()
        directory?.remove()
    }
}

/// A fresh directory under /tmp, removed with everything in it by `remove()`.
struct TemporaryStoreDirectory: Sendable {
    let path: String

    init() throws {
        var template = Array("/tmp/mvvmr-store-tests-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let base = buffer.baseAddress, let result = mkdtemp(base) else { return nil }
            return String(cString: result)
        }
        path = try #require(made, "mkdtemp failed: errno \(errno)")
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Outcomes of appends in the order their completions ran.
final class CompletionLog: Sendable {
    private let entries = Locked<[(record: StoredRecord, outcome: Result<Void, SessionStoreError>)]>([])

    /// Appends `record` to `store`, logging its outcome when it completes.
    func append(_ record: StoredRecord, to store: any SessionStore, lastActive: Int64 = 0) {
        store.append(record, lastActive: lastActive) { outcome in
            self.entries.withLock { $0.append((record, outcome)) }
        }
    }

    /// The records in completion order, each with its outcome's kind (nil: success).
    var outcomes: [(number: Int, session: String, failure: SessionStoreError.Kind?)] {
        entries.withLock { entries in
            entries.map { entry in
                switch entry.outcome {
                case .success: (entry.record.number, entry.record.session, nil)
                case .failure(let error): (entry.record.number, entry.record.session, error.kind)
                }
            }
        }
    }

    /// The failures' messages.
    var failureMessages: [String] {
        entries.withLock { entries in
            entries.compactMap { entry in
                if case .failure(let error) = entry.outcome { return error.message }
                return nil
            }
        }
    }

    var count: Int { entries.withLock { $0.count } }
}

/// Appends `record` and waits for its completion.
@discardableResult
func appendWaiting(
    _ record: StoredRecord, to store: any SessionStore, lastActive: Int64 = 0
) -> Result<Void, SessionStoreError> {
    let waiter = OutcomeWaiter()
    store.append(record, lastActive: lastActive) { waiter.complete($0) }
    return waiter.wait()
}

/// A record with a short JSON body naming it.
func record(_ session: String, _ number: Int, bodySize: Int? = nil) -> StoredRecord {
    let text = "{\"input\":\(number)}"
    let body = bodySize.map { size in Array(text.utf8) + [UInt8](repeating: 0x20, count: max(0, size - text.utf8.count))
    }
    return StoredRecord(session: session, number: number, body: body ?? Array(text.utf8))
}

/// The failure's kind, or nil for a success.
func failureKind(_ result: Result<Void, SessionStoreError>) -> SessionStoreError.Kind? {
    if case .failure(let error) = result { return error.kind }
    return nil
}

/// The error `body` throws, or nil.
func storeError(_ body: () throws(SessionStoreError) -> Void) -> SessionStoreError? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}

/// Runs `body(index)` on `count` threads of their own (not Swift's cooperative pool) and waits for them all.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    final class Work: Sendable {
        let index: Int
        let body: @Sendable (Int) -> Void
        init(index: Int, body: @escaping @Sendable (Int) -> Void) {
            self.index = index
            self.body = body
        }
    }
    var threads: [pthread_t] = []
    for index in 0..<count {
        let work = Unmanaged.passRetained(Work(index: index, body: body))
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                let work = Unmanaged<Work>.fromOpaque(argument).takeRetainedValue()
                work.body(work.index)
                return nil
            }, work.toOpaque())
        if created == 0 {
            threads.append(thread)
        } else {
            work.release()
            Issue.record("pthread_create failed: \(created)")
        }
    }
    for thread in threads {
        pthread_join(thread, nil)
    }
}
