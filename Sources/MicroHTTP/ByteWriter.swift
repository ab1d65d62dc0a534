#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Bytes written into memory of its own, grown by doubling: an append is a copy, no generic call.
struct ByteWriter: ~Copyable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    var count = 0

    init(capacity: Int) {
        self.capacity = max(64, capacity)
        base = UnsafeMutablePointer<UInt8>.allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inline(__always)
    mutating func reserve(_ more: Int) {
        guard count + more > capacity else { return }
        var grown = capacity * 2
        while grown < count + more { grown *= 2 }
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        moved.update(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = grown
    }

    @inline(__always)
    mutating func append(_ pointer: UnsafeRawPointer, _ length: Int) {
        reserve(length)
        UnsafeMutableRawPointer(base + count).copyMemory(from: pointer, byteCount: length)
        count += length
    }

    @inline(__always)
    mutating func append(_ text: StaticString) {
        append(UnsafeRawPointer(text.utf8Start), text.utf8CodeUnitCount)
    }

    @inline(__always)
    mutating func append(byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ value: UInt32) {
        reserve(4)
        UnsafeMutableRawPointer(base + count).storeBytes(of: value, as: UInt32.self)
        count += 4
    }

    mutating func append(decimal value: Int) {
        reserve(20)
        var remaining = max(0, value)
        var digits = 0
        var probe = remaining
        repeat {
            digits += 1
            probe /= 10
        } while probe > 0
        var at = count + digits - 1
        repeat {
            base[at] = UInt8(48 + remaining % 10)
            remaining /= 10
            at -= 1
        } while remaining > 0
        count += digits
    }

    mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { bytes in
            if let address = bytes.baseAddress { append(UnsafeRawPointer(address), bytes.count) }
        }
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
}

