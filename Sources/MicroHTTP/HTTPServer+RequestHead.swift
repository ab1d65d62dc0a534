extension HTTPServer {
    /// Checks a request's head on the library's first call for it (its header fields are known, no byte of
    /// its body has been read) and returns the error to answer with at once, or `nil` to go on.
    ///
    /// The request's values are read here, once, and kept in `context` for its dispatch.
    /// - Parameters:
    ///   - context: the request's state; its `values` are set.
    ///   - connection: the library's connection.
    ///   - url: the request target as received.
    /// - Returns: 400 `malformed_request` for framing that could smuggle a request, 413 for a declared body
    ///   over `maxBodyBytes`, or `nil`.
    func refusalOfHead(of context: RequestContext, connection: OpaquePointer, url: UnsafePointer<CChar>) -> HTTPError? {
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
