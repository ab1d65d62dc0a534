/// Bytes written through a pointer into room the writer sized beforehand: a writer that knows the most bytes it may
/// write makes one allocation and checks one bound per write, where appending to an array checks its capacity and
/// its uniqueness, and goes through the generic copy of a sequence, at every append. A write that would not fit is
/// left out whole (the text is then cut short, which correctly sized room never is).
///
/// The writer of the hot messages (a page read's snapshot) and of log lines.
public struct BoundedBytes {
    @usableFromInline let base: UnsafeMutablePointer<UInt8>
    @usableFromInline let capacity: Int
    @usableFromInline var written = 0

    /// How many bytes are written.
    @inlinable public var count: Int { written }

    /// Writes into the `capacity` bytes at `base` (which the caller owns, and reads `count` of afterwards).
    /// - Parameters:
    ///   - base: the room's first byte.
    ///   - capacity: how many bytes the room holds.
    @inlinable
    public init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// The bytes `write` writes into room for `capacity` of them, as an array of exactly those bytes.
    ///
    /// Room for at most ``temporaryRoom`` bytes is taken on the stack and the bytes written are copied into an array
    /// of their size: making an array of room and filling it in place goes through the standard library's generic
    /// allocation, which looks the array storage's type up at run time (about 330 instructions, more than the copy of
    /// a few hundred bytes costs); larger room is an array filled in place.
    /// - Parameters:
    ///   - capacity: the most bytes `write` may write.
    ///   - write: writes the bytes.
    /// - Returns: the bytes written.
    @inlinable
    public static func make(capacity: Int, _ write: (inout BoundedBytes) -> Void) -> [UInt8] {
        if capacity <= temporaryRoom {
            var made: [UInt8] = []
            withTemporary(capacity: capacity, write) { made = Array($0) }
            return made
        }
        return [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            guard let base = buffer.baseAddress else {
                initialized = 0
                return
            }
            var bytes = BoundedBytes(base: base, capacity: buffer.count)
            write(&bytes)
            initialized = bytes.count
        }
    }

    /// The most bytes ``make(capacity:_:)`` writes in temporary room (then copies) rather than in its array.
    @inlinable public static var temporaryRoom: Int { 1024 }

    /// Lets `write` write at most `capacity` bytes into room of their own (on the stack when it is small), then hands
    /// the bytes written to `body`, valid only during the call: a text used once (a log line copied into the log's
    /// buffer, a text digested) needs no array.
    /// - Parameters:
    ///   - capacity: the most bytes `write` may write.
    ///   - write: writes the bytes.
    ///   - body: receives them.
    @inlinable
    public static func withTemporary(
        capacity: Int, _ write: (inout BoundedBytes) -> Void, _ body: (UnsafeBufferPointer<UInt8>) -> Void
    ) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(0, capacity)) { room in
            guard let base = room.baseAddress else {
                body(UnsafeBufferPointer(start: nil, count: 0))
                return
            }
            var bytes = BoundedBytes(base: base, capacity: room.count)
            write(&bytes)
            body(UnsafeBufferPointer(start: base, count: bytes.count))
        }
    }

    /// Claims the next `count` bytes for the caller to fill, when they fit: the pointer to them, else nil (and
    /// nothing is claimed).
    /// - Parameter count: how many bytes.
    /// - Returns: where they go.
    @inlinable
    public mutating func claim(_ count: Int) -> UnsafeMutablePointer<UInt8>? {
        guard count >= 0, written + count <= capacity else { return nil }
        defer { written += count }
        return base + written
    }

    /// Lets `write` fill up to `maximum` bytes in place, when that many fit (else nothing is written); `write` returns
    /// how many it wrote (at most `maximum`).
    /// - Parameters:
    ///   - maximum: the most bytes `write` may write.
    ///   - write: fills the room it is given from its start; returns the count.
    @inlinable
    public mutating func put(atMost maximum: Int, _ write: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        guard maximum >= 0, written + maximum <= capacity else { return }
        written += min(maximum, max(0, write(UnsafeMutableBufferPointer(start: base + written, count: maximum))))
    }

    /// Writes one byte.
    /// - Parameter byte: the byte.
    @inlinable
    public mutating func put(_ byte: UInt8) {
        guard written < capacity else { return }
        base[written] = byte
        written += 1
    }

    /// Writes `bytes`.
    /// - Parameter bytes: the bytes.
    @inlinable
    public mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, written + bytes.count <= capacity else { return }
        (base + written).update(from: source, count: bytes.count)
        written += bytes.count
    }

    /// The most bytes ``JSONByteSink/putEscaped(_:)-(String)`` writes for `text`: six for each of its bytes (`\u0001`).
    /// - Parameter text: the text.
    /// - Returns: a byte count.
    @inlinable
    public static func escapedCapacity(_ text: String) -> Int { 6 * text.utf8.count }

    /// The most bytes ``JSONByteSink/putDecimal(_:)`` writes.
    @inlinable public static var decimalCapacity: Int { 20 }
}
