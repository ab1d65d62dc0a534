#if canImport(Glibc)
    import Glibc
#endif

/// Hands the heap's free pages back to the operating system after many sessions left memory at once.
///
/// glibc's `malloc` keeps what is freed for later allocations and gives memory back by itself only from the top
/// of each heap. Sessions are allocated while requests come in, interleaved with everything else, so when a sweep
/// passivates thousands of them their memory is free but scattered through the heaps, and the process's resident
/// size stays where it was at the peak: 10,000 passivated counters sessions kept about 130 MiB resident
/// (Benchmarks/run.py passivated-memory). `malloc_trim(0)` returns every whole free page of every arena
/// (`madvise(MADV_DONTNEED)`); it is called from the sweeper only, after it released many sessions.
///
/// `malloc_trim` is a glibc extension that the Swift `Glibc` module does not declare; it is looked up once at run
/// time (`dlsym`), and where it is missing (another C library) releasing does nothing.
enum FreedMemory {
    /// Sessions released by one sweep from which trimming is worth its cost (a walk of every arena's free lists,
    /// under each arena's lock, a few milliseconds for a heap of hundreds of MiB). Fewer sessions free too little
    /// to matter, and the memory they leave is reused by the next sessions.
    static let sessionsWorthReleasing = 256

    /// Returns the heap's free pages to the operating system (glibc); a no-op elsewhere.
    static func release() {
        #if canImport(Glibc)
            _ = trim?(0)
        #endif
    }

    #if canImport(Glibc)
        private typealias Trim = @convention(c) (Int) -> Int32

        /// glibc's `int malloc_trim(size_t pad)`, or nil when the C library has none.
        private static let trim: Trim? = {
            // RTLD_DEFAULT (a null handle): the symbol as the process's libraries define it.
            guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
            return unsafeBitCast(symbol, to: Trim.self)
        }()
    #endif
}

/// When the sweeper trims the heap (``FreedMemory/release()``): after a sweep that took ``FreedMemory/sessionsWorthReleasing``
/// sessions or more out of memory, and once more at the sweep after it, whatever that one released.
///
/// Some of the sessions' memory is still referenced at the first trim and freed a moment later (by answers and
/// store completions still in flight); without the second trim it stayed resident until the next large sweep, and
/// now and then a passivation benchmark kept tens of MiB more than usual.
struct SweepTrimming {
    /// Whether the last sweep released many sessions.
    private var trimsAgain = false

    /// Whether to trim after a sweep that released `count` sessions.
    mutating func shouldTrim(afterReleasing count: Int) -> Bool {
        let isMany = count >= FreedMemory.sessionsWorthReleasing
        defer { trimsAgain = isMany }
        return trimsAgain || isMany
    }
}
