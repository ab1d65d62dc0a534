#if canImport(Glibc)
    import Glibc
#endif

/// Hands the heap's free pages back to the operating system after many sessions left memory at once.
///
/// An allocator keeps what is freed for later allocations. Sessions are allocated while requests come in,
/// interleaved with everything else, so when a sweep passivates thousands of them their memory is free but scattered
/// through the heap, and the process's resident size stays where it was at the peak: with glibc's `malloc`, 10,000
/// passivated counters sessions kept about 130 MiB resident (Benchmarks/run.py passivated-memory). This asks the
/// allocator the process runs on to return its free pages; it is called from the sweeper only, after it released
/// many sessions.
///
/// - jemalloc (the demo server links it, Package.swift): `mallctl("arena.<all>.purge")` returns every arena's unused
///   dirty pages at once (`madvise`), instead of over the next seconds of its decay.
/// - glibc: `malloc_trim(0)` returns every whole free page of every arena (`madvise(MADV_DONTNEED)`).
///
/// Neither is declared by the Swift `Glibc` module, and this library does not link jemalloc (tests and other programs
/// keep glibc's allocator), so both are looked up once at run time (`dlsym`); where neither is present, releasing does
/// nothing.
enum FreedMemory {
    /// Sessions released by one sweep from which releasing is worth its cost (a walk of the allocator's free lists,
    /// a few milliseconds for a heap of hundreds of MiB). Fewer sessions free too little to matter, and the memory
    /// they leave is reused by the next sessions.
    static let sessionsWorthReleasing = 256

    /// Returns the heap's free pages to the operating system; a no-op where the allocator offers no way.
    static func release() {
        #if canImport(Glibc)
            releaser?()
        #endif
    }

    #if canImport(Glibc)
        private typealias Trim = @convention(c) (Int) -> Int32
        private typealias Control =
            @convention(c) (
                UnsafePointer<CChar>?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?, UnsafeMutableRawPointer?,
                Int
            ) -> Int32

        /// jemalloc's `int mallctl(const char *name, void *old, size_t *oldLength, void *new, size_t newLength)`, when
        /// jemalloc is the process's allocator.
        private static let jemallocControl: Control? = {
            // RTLD_DEFAULT (a null handle): the symbol as the process's libraries define it.
            guard let symbol = dlsym(nil, "mallctl") else { return nil }
            return unsafeBitCast(symbol, to: Control.self)
        }()

        /// glibc's `int malloc_trim(size_t pad)`, or nil when the C library has none.
        private static let glibcTrim: Trim? = {
            guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
            return unsafeBitCast(symbol, to: Trim.self)
        }()

        /// What ``release()`` runs: jemalloc's purge of every arena when jemalloc serves the process (glibc's trim
        /// would find its own heap empty), else glibc's trim.
        private static let releaser: (@Sendable () -> Void)? = {
            if let control = jemallocControl {
                // MALLCTL_ARENAS_ALL (4096): every arena.
                return { _ = control("arena.4096.purge", nil, nil, nil, 0) }
            }
            if let trim = glibcTrim { return { _ = trim(0) } }
            return nil
        }()
    #endif
}

/// When the sweeper releases the heap's free pages (``FreedMemory/release()``): after a sweep that took
/// ``FreedMemory/sessionsWorthReleasing`` sessions or more out of memory, and once more at the sweep after it, whatever
/// that one released.
///
/// Some of the sessions' memory is still referenced at the first release and freed a moment later (by answers and
/// store completions still in flight); without the second release it stayed resident until the next large sweep, and
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
