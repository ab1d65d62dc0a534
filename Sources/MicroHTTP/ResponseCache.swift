#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
internal import CMicroHTTPD

/// The last answers to `GET` and `HEAD` requests, per library thread, as the library's response objects: an answer
/// equal to one of them (the same header fields in the same order, the same body bytes; the status is given to the
/// library with each answer, not kept in its response) is queued again as it is, without making a response, copying
/// its body or adding its header fields once more. A client reading the same unchanged resource again and again (a
/// page polled or reloaded, `/healthz`) costs the library's work for the request and the handler's, and nothing for
/// its answer.
///
/// An entry is found by what the answer is, compared whole, never by what the request was, so it can only stand for
/// itself: whatever the handler decided, the bytes sent are those it gave. The library adds `Date`,
/// `Content-Length` and `Connection` per connection when it sends, and counts references to a response, so one
/// response object can be queued on several connections at once (it is never changed once made). Each thread has its
/// own entries: nothing is locked or shared. A thread keeps at most ``slotCount`` answers of at most
/// ``largestBody`` bytes each, replaced oldest first.
final class ResponseCache {
    /// One kept answer: what it is, and the library's response that sends it.
    private struct Entry {
        let headers: HTTPHeaders
        let body: [UInt8]
        /// The library's response, kept by this entry's reference to it (given back when the entry goes).
        let response: OpaquePointer
    }

    /// How many answers a thread keeps.
    static var slotCount: Int { 8 }
    /// The largest body kept, in bytes: a larger answer is made afresh every time.
    static var largestBody: Int { 8 * 1024 }

    private var entries: [Entry] = []
    /// The entry replaced next once every slot is taken.
    private var nextVictim = 0

    deinit {
        for entry in entries { MHD_destroy_response(entry.response) }
    }

    /// Whether an answer may be kept at all: a body of bytes no larger than ``largestBody``.
    static func admits(_ body: [UInt8]) -> Bool {
        body.count <= largestBody
    }

    /// The library's response for exactly this answer, if this thread kept one; the caller queues it and must not
    /// destroy it (the cache keeps its own reference).
    func response(headers: HTTPHeaders, body: [UInt8]) -> OpaquePointer? {
        for entry in entries where entry.body.count == body.count {
            guard Self.sameBytes(entry.body, body), entry.headers == headers else { continue }
            return entry.response
        }
        return nil
    }

    /// Keeps `response`, the library's response just made for this answer, taking over the caller's reference to it
    /// (the caller must not destroy it); the oldest entry goes when every slot is taken.
    func keep(_ response: OpaquePointer, headers: HTTPHeaders, body: [UInt8]) {
        let entry = Entry(headers: headers, body: body, response: response)
        if entries.count < Self.slotCount {
            entries.append(entry)
            return
        }
        let replaced = entries[nextVictim].response
        entries[nextVictim] = entry
        nextVictim = (nextVictim + 1) % Self.slotCount
        MHD_destroy_response(replaced)
    }

    private static func sameBytes(_ first: [UInt8], _ second: [UInt8]) -> Bool {
        first.withUnsafeBytes { left in
            second.withUnsafeBytes { right in
                guard let leftBase = left.baseAddress, let rightBase = right.baseAddress else {
                    return left.count == right.count
                }
                return left.count == right.count && memcmp(leftBase, rightBase, left.count) == 0
            }
        }
    }

    /// The calling thread's cache, made on its first use and released when the thread ends (its responses given
    /// back to the library); nil when the process has no thread-local key to spare (every answer is then made
    /// afresh).
    static var forCurrentThread: ResponseCache? { perThread.current(making: ResponseCache.init) }

    private static let perThread = ThreadLocalObject<ResponseCache>()
}
