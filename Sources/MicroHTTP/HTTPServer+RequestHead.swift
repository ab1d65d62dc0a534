internal import CMicroHTTPD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension HTTPServer {
    /// The memory libmicrohttpd gets for one connection (its pool), given the header limit MicroHTTP enforces.
    ///
    /// The pool holds the received header section and the library's record of each field (the library's own
    /// copy of the `Cookie` field is avoided: see `mvvmr_mhd_add_decoy_cookie`). 4 KiB above the limit leaves
    /// room for those records and lets a head somewhat over the limit be received whole, so that MicroHTTP
    /// measures it and answers itself (431 or 414 as JSON) where the library would have. The library zeroes
    /// the whole pool between the requests of a kept-alive connection, so every byte of it costs on every
    /// request (about 0.085 instructions a byte): the headroom is kept small.
    /// - Parameter maxHeaderBytes: the configured header limit.
    /// - Returns: the pool size in bytes.
    static func connectionPoolBytes(maxHeaderBytes: Int) -> Int {
        let limit = min(max(4096, maxHeaderBytes), Int.max / 2)  // (no overflow below)
        return limit + 4 * 1024
    }

    /// Checks a request's head on the library's first call for it (its header fields are known, no byte of
    /// its body has been read) and returns the error to answer with at once, or `nil` to go on.
    ///
    /// The request's values are packed here, once, and kept in `context` for its dispatch.
    /// - Parameters:
    ///   - context: the request's state; its `packedValues` are set.
    ///   - connection: the library's connection.
    ///   - url: the request target as received.
    ///   - version: the request's HTTP version as received (`HTTP/1.1`).
    /// - Returns: 414 or 431 for a head over `maxHeaderBytes`, 400 `malformed_request` for framing that could
    ///   smuggle a request, 413 for a declared body over `maxBodyBytes`, or `nil`.
    func refusalOfHead(
        of context: RequestContext, connection: OpaquePointer, url: UnsafePointer<CChar>, version: UnsafePointer<CChar>?
    ) -> HTTPError? {
        let headerLimit = max(4096, configuration.maxHeaderBytes)
        if mvvmr_mhd_request_header_size(connection) > headerLimit {
            return strlen(url) > headerLimit
                ? .uriTooLong(limit: headerLimit) : .headerFieldsTooLarge(limit: headerLimit)
        }
        let values = RequestValues.packed(connection)
        context.packedValues = values
        switch RequestFraming.read(values) {
        case .failure(let problem):
            return .malformedRequest(problem)
        case .success(.chunked) where version.map({ strcmp($0, "HTTP/1.0") == 0 }) ?? false:
            // RFC 9112, 6.1: a Transfer-Encoding in an HTTP/1.0 request is faulty framing (1.0 has no chunked
            // coding, so an HTTP/1.0 proxy in front would have read the body differently).
            return .malformedRequest(.transferEncodingInHTTP10)
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
        limitReached(
            status: 431, code: "header_fields_too_large",
            message: "The request's header section is larger than \(limit) bytes.",
            limit: limit, headers: ["Connection": "close"])
    }

    /// 414 `uri_too_long`: the request target alone is over `maxHeaderBytes`; `details.limit`; the connection
    /// closes after it.
    /// - Parameter limit: the limit in bytes.
    /// - Returns: the error.
    static func uriTooLong(limit: Int) -> HTTPError {
        limitReached(
            status: 414, code: "uri_too_long", message: "The request target is longer than \(limit) bytes.",
            limit: limit, headers: ["Connection": "close"])
    }
}
