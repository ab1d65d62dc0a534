internal import CMicroHTTPD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A request's header fields, cookies and query parameters, read from the library in one pass.
struct RequestValues {
    var headers: [HTTPHeader] = []
    var cookies: [String: String] = [:]
    var query: [QueryItem] = []

    init(of connection: OpaquePointer) {
        let kinds = MHD_ValueKind.HEADER_KIND.rawValue | MHD_ValueKind.COOKIE_KIND.rawValue
            | MHD_ValueKind.GET_ARGUMENT_KIND.rawValue
        withUnsafeMutablePointer(to: &self) { pointer in
            _ = mvvmr_mhd_connection_values(
                connection, kinds,
                { valuesPointer, kind, key, value in
                    guard let valuesPointer, let key else { return .YES }
                    let values = valuesPointer.assumingMemoryBound(to: RequestValues.self)
                    values.pointee.add(kind: kind, key: key, value: value)
                    return .YES
                }, pointer)
        }
    }

    private mutating func add(kind: MHD_ValueKind, key: UnsafePointer<CChar>, value: UnsafePointer<CChar>?) {
        switch kind {
        case .HEADER_KIND:
            headers.append(HTTPHeader(name: String(cString: key), value: value.map { String(cString: $0) } ?? ""))
        case .COOKIE_KIND:
            let name = String(cString: key)
            if cookies[name] == nil { cookies[name] = value.map { String(cString: $0) } ?? "" }
        case .GET_ARGUMENT_KIND:
            // The library already turned `+` into spaces (escapes are left to us); undecodable parameters
            // are dropped.
            guard let name = Self.decoded(key) else { return }
            guard let value else {
                query.append(QueryItem(name: name, value: nil))
                return
            }
            guard let decodedValue = Self.decoded(value) else { return }
            query.append(QueryItem(name: name, value: decodedValue))
        default:
            break
        }
    }

    private static func decoded(_ text: UnsafePointer<CChar>) -> String? {
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text))
        return try? PercentDecoding.decode(Array(bytes)[...], plusIsSpace: false)
    }
}
