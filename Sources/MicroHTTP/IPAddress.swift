internal import CMicroHTTPD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An IPv4 or IPv6 address, stored as raw bytes (formatting it as text is done only when asked).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    private var high: UInt64
    private var low: UInt64
    /// 4 for IPv4, 16 for IPv6, 0 when unknown.
    public let byteCount: Int

    /// The unknown address (its text form is empty).
    public static let unknown = IPAddress(high: 0, low: 0, byteCount: 0)

    private init(high: UInt64, low: UInt64, byteCount: Int) {
        self.high = high
        self.low = low
        self.byteCount = byteCount
    }

    /// Creates an address from 4 (IPv4) or 16 (IPv6) raw bytes in network order; any other count gives ``unknown``.
    /// - Parameter bytes: the address bytes.
    public init(bytes: some Collection<UInt8>) {
        guard bytes.count == 4 || bytes.count == 16 else {
            self = .unknown
            return
        }
        var raw = (UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &raw) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        self.init(high: raw.0, low: raw.1, byteCount: bytes.count)
    }

    /// Parses an IPv4 or IPv6 literal (`127.0.0.1`, `::1`).
    /// - Parameter text: the literal.
    public init?(_ text: String) {
        var buffer = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, text, &buffer) == 1 {
            self.init(bytes: buffer[..<4])
        } else if inet_pton(AF_INET6, text, &buffer) == 1 {
            self.init(bytes: buffer)
        } else {
            return nil
        }
    }

    /// The raw bytes in network order (empty when unknown).
    public var bytes: [UInt8] {
        var raw = (high, low)
        return withUnsafeBytes(of: &raw) { Array($0.prefix(byteCount)) }
    }

    /// The most bytes the text of an address takes (an IPv6 address with an IPv4 tail).
    public static let maximumTextCount = 46

    /// Writes the address as text (`127.0.0.1`, `::1`; nothing when unknown) into `buffer`, without making a
    /// `String`: request logs write it for every request.
    /// - Parameter buffer: room for at least ``maximumTextCount`` bytes (a smaller one gets nothing).
    /// - Returns: how many bytes were written.
    public func writeText(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        guard let base = buffer.baseAddress, buffer.count >= Self.maximumTextCount else { return 0 }
        if byteCount == 4 {
            var raw = high
            return withUnsafeBytes(of: &raw) { octets in
                var count = 0
                for index in 0..<4 {
                    if index > 0 {
                        base[count] = UInt8(ascii: ".")
                        count += 1
                    }
                    let octet = octets[index]
                    if octet >= 100 {
                        base[count] = UInt8(ascii: "0") + octet / 100
                        count += 1
                    }
                    if octet >= 10 {
                        base[count] = UInt8(ascii: "0") + octet / 10 % 10
                        count += 1
                    }
                    base[count] = UInt8(ascii: "0") + octet % 10
                    count += 1
                }
                return count
            }
        }
        guard byteCount == 16 else { return 0 }
        var raw = (high, low)
        return withUnsafeBytes(of: &raw) { rawBuffer in
            guard let source = rawBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return 0 }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { text in
                guard mvvmr_format_ip_address(source, 16, text, buffer.count) == 1 else { return 0 }
                return strlen(text)
            }
        }
    }

    /// The address as text (`127.0.0.1`, `::1`), or an empty string when unknown.
    public var description: String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maximumTextCount) { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[..<writeText(into: buffer)]), as: UTF8.self)
        }
    }
}
