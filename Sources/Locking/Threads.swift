#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The project's own threads (a store's writer, the log writer, the connection watcher): a pthread that runs one
/// closure and ends with it. The closure holds what it needs (a writer holds itself) until it returns.
public enum Threads {
    /// Starts a thread running `body`.
    /// - Parameter body: what the thread runs; the thread ends when it returns.
    /// - Returns: the thread, or the error number `pthread_create` gave (nothing runs then).
    public static func start(_ body: @escaping @Sendable () -> Void) -> Result<pthread_t, ThreadStartError> {
        let box = Unmanaged.passRetained(Body(body))
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                Unmanaged<Body>.fromOpaque(argument).takeRetainedValue().run()
                return nil
            }, box.toOpaque())
        guard created == 0 else {
            box.release()
            return .failure(ThreadStartError(code: created))
        }
        return .success(thread)
    }

    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}

/// Why a thread could not be started: `pthread_create`'s error number.
public struct ThreadStartError: Error, Sendable, CustomStringConvertible {
    /// The error number (`EAGAIN`: too many threads or too little memory).
    public let code: Int32

    /// The system's words for it.
    public var description: String { String(cString: strerror(code)) }
}
