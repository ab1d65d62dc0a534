internal import CMicroHTTPD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension HTTPServer {
    /// The memory libmicrohttpd gets for one connection (its pool), given the header limit MicroHTTP enforces.
    ///
    /// The pool holds the received header section, the library's record of each field and, while the library
    /// parses cookies, a second copy of the `Cookie` field. With a pool of only `maxHeaderBytes`, headers near
    /// the limit ran the library out of pool memory, and some of its answers then went out with their status
    /// line and header fields twice (a 20 KiB `Cookie` did). Twice the limit plus 16 KiB leaves room for all
    /// three, so a header section up to the limit is parsed by the library and measured by MicroHTTP, which
    /// answers an oversized one itself (431 or 414 as JSON) below the point where the library would.
    /// - Parameter maxHeaderBytes: the configured header limit.
    /// - Returns: the pool size in bytes.
    static func connectionPoolBytes(maxHeaderBytes: Int) -> Int {
        let limit = min(max(4096, maxHeaderBytes), Int.max / 4)  // (no overflow below)
        return 2 * limit + 16 * 1024
    }

    /// Checks a request's head on the library's first call for it (its header fields are known, no byte of
    /// its body has been read) and returns the error to answer with at once, or `nil` to go on.
    ///
    /// The request's values are read here, once, and kept in `context` for its dispatch.
    /// - Parameters:
    ///   - context: the request's state; its `values` are set.
    ///   - connection: the library's connection.
    ///   - url: the request target as received.
    /// - Returns: 414 or 431 for a head over `maxHeaderBytes`, 400 `malformed_request` for framing that could
    ///   smuggle a request, 413 for a declared body over `maxBodyBytes`, or `nil`.
    func refusalOfHead(of context: RequestContext, connection: OpaquePointer, url: UnsafePointer<CChar>) -> HTTPError? {
        let headerLimit = max(4096, configuration.maxHeaderBytes)
        if mvvmr_mhd_request_header_size(connection) > headerLimit {
            return strlen(url) > headerLimit ? .uriTooLong(limit: headerLimit) : .headerFieldsTooLarge(limit: headerLimit)
        }
        let values = RequestValues(of: connection)
        context.values = values
        switch RequestFraming.read(values.packed) {
        case .failure(let problem):
            return .malformedRequest(problem)
        case .success(.contentLength(let length)) where length > UInt64(max(0, configuration.maxBodyBytes)):
            return .payloadTooLarge(limit: configuration.maxBodyBytes)
        case .success:
            return nil
        }
    }
}

extension HTTPError {
    /// 431 `header_fields_too_large`: the request's header section is over `maxHeaderBytes`; `details.limit`;
    /// the connection closes after it.
    /// - Parameter limit: the limit in bytes.
    /// - Returns: the error.
    static func headerFieldsTooLarge(limit: Int) -> HTTPError {
        HTTPError(
            status: 431, code: "header_fields_too_large",
            message: "The request's header section is larger than \(limit) bytes.",
            detailsJSON: Array(#"{"limit":\#(limit)}"#.utf8), headers: ["Connection": "close"])
    }

    /// 414 `uri_too_long`: the request target alone is over `maxHeaderBytes`; `details.limit`; the connection
    /// closes after it.
    /// - Parameter limit: the limit in bytes.
    /// - Returns: the error.
    static func uriTooLong(limit: Int) -> HTTPError {
        HTTPError(
            status: 414, code: "uri_too_long", message: "The request target is longer than \(limit) bytes.",
            detailsJSON: Array(#"{"limit":\#(limit)}"#.utf8), headers: ["Connection": "close"])
    }
}
