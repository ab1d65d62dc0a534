import Testing

@testable import MVVMRServer

/// The sweeper trims the heap after a sweep that released many sessions, and once more at the next sweep.
@Suite struct SweepTrimmingTests {
    @Test func aLargeSweepTrimsThenAndAtTheNextSweepOnly() {
        var trimming = SweepTrimming()
        let many = FreedMemory.sessionsWorthReleasing
        let sweeps = [0, many - 1, many, 3, 3, many * 10, many, 0, 0]
        let trims = sweeps.map { trimming.shouldTrim(afterReleasing: $0) }
        // A few sessions are not worth a trim; a large sweep trims, and the next sweep once more, for the memory
        // freed after the first trim.
        #expect(trims == [false, false, true, true, false, true, true, true, false])
    }
}
