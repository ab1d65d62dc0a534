import Dispatch
import Foundation
import JSONPatch
import MVVMR
import Synchronization

import Testing

// Only an input's step runs under the session's lock: records and events are handed to the recorder and the
// event sink afterwards, one call at a time, in input order. So a slow recorder (a store append, framing and
// fan-out) holds no other request of the session up, and a sink may read the session.

@Suite struct SessionOutboxConcurrencyTests {
    @Test func recordsAndEventsReachTheirReceiversInOrderOneAtATimeFromManyThreads() throws {
        let numbers = Mutex<[Int]>([])
        let sequences = Mutex<[Int]>([])
        let inCall = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let session = PageSession(
            registry: UnitRegistry(root: .counter, units: []), clock: .realTime,
            eventSink: { event in sequences.withLock { $0.append(event.sequence) } })
        session.setRecorder { record, events in
            if inCall.add(1, ordering: .sequentiallyConsistent).newValue != 1 {
                overlaps.add(1, ordering: .relaxed)
            }
            numbers.withLock { $0.append(record.number) }
            #expect(events.allSatisfy { $0.sequence <= record.sequence })
            inCall.subtract(1, ordering: .sequentiallyConsistent)
        }
        try session.start()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<250 { _ = try? session.perform("increment", on: "counter") }
        }
        session.releaseAll()
        #expect(numbers.withLock { $0 } == Array(1...1_001), "the start, then 1,000 actions, each once, in order")
        #expect(sequences.withLock { $0 } == Array(1...1_001))
        #expect(overlaps.load(ordering: .relaxed) == 0, "the recorder was never called twice at once")
    }

    @Test func aSlowRecorderDoesNotHoldTheNextInputsStepUp() throws {
        let recorderMayGoOn = DispatchSemaphore(value: 0)
        let recorded = Mutex<[Int]>([])
        let session = PageSession(registry: UnitRegistry(root: .counter, units: []), clock: .realTime)
        session.setRecorder { record, _ in
            // The first action's record: the recorder is slow (a store, say) and waits.
            if record.number == 2 { recorderMayGoOn.wait() }
            recorded.withLock { $0.append(record.number) }
        }
        try session.start()
        let firstDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? session.perform("increment", on: "counter")
            firstDone.signal()
        }
        // Wait until the first action's step is over and its recorder call is waiting.
        let deadline = Date().addingTimeInterval(10)
        while session.inputNumber < 2 && Date() < deadline { usleep(1_000) }
        let secondRevision = Mutex<Int?>(nil)
        let secondDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result = try? session.perform("increment", on: "counter")
            secondRevision.withLock { $0 = result?.rev }
            secondDone.signal()
        }
        // Were the recorder called inside the lock, the second step would wait for it (and time out here).
        let ranMeanwhile = secondDone.wait(timeout: .now() + 5) == .success
        #expect(ranMeanwhile, "the second action's step ran while the first's record was still being handed out")
        #expect(recorded.withLock { $0 } == [1], "its record waits behind the first one's")
        recorderMayGoOn.signal()
        if !ranMeanwhile { _ = secondDone.wait(timeout: .now() + 10) }
        #expect(secondRevision.withLock { $0 } == 2)
        #expect(firstDone.wait(timeout: .now() + 10) == .success)
        session.releaseAll()
        #expect(recorded.withLock { $0 } == [1, 2, 3])
    }

    @Test func anEventSinkMayReadTheSessionItListensTo() throws {
        let box = Mutex<PageSession?>(nil)
        let seenRevisions = Mutex<[Int]>([])
        let session = PageSession(
            registry: UnitRegistry(root: .counter, units: []), clock: .virtual,
            eventSink: { event in
                guard case .patch = event.kind, let session = box.withLock({ $0 }) else { return }
                // Inside the lock this would deadlock; the sink runs after it.
                let count = session.pages.first?.view[pointer("/count")]?.intValue ?? -1
                seenRevisions.withLock { $0.append(count) }
            })
        box.withLock { $0 = session }
        try session.start()
        for _ in 0..<3 { try session.perform("increment", on: "counter") }
        #expect(seenRevisions.withLock { $0 } == [1, 2, 3])
        box.withLock { $0 = nil }
        session.releaseAll()
    }

    @Test func aSinkThatEndsTheSessionItListensToDoesNotWaitForItself() throws {
        let box = Mutex<PageSession?>(nil)
        let session = PageSession(
            registry: UnitRegistry(root: .counter, units: []), clock: .virtual,
            eventSink: { event in
                guard case .patch = event.kind, let session = box.withLock({ $0 }) else { return }
                session.releaseAll()
            })
        box.withLock { $0 = session }
        try session.start()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? session.perform("increment", on: "counter")
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success, "releaseAll from the sink returned")
        #expect(session.livePageCount == 0)
        box.withLock { $0 = nil }
    }
}
