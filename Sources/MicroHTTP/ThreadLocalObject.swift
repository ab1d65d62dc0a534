#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One object of type `Object` per thread, made on the thread's first use and released when the thread ends: what a
/// library thread keeps for itself (``RouteCache``, ``ResponseCache``), reached without a lock.
struct ThreadLocalObject<Object: AnyObject>: Sendable {
    /// The thread-local key, whose destructor releases a thread's object as the thread ends; nil when
    /// `pthread_key_create` refused (every key of the process taken).
    private let key: pthread_key_t?

    init() {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            Unmanaged<AnyObject>.fromOpaque(pointer).release()
        }
        self.key = created == 0 ? key : nil
    }

    /// The calling thread's object, made by `make` on its first use; nil when there is no key (the caller then does
    /// without).
    func current(making make: () -> Object) -> Object? {
        guard let key else { return nil }
        if let existing = pthread_getspecific(key) {
            return Unmanaged<Object>.fromOpaque(existing).takeUnretainedValue()
        }
        let made = Unmanaged.passRetained(make())
        guard pthread_setspecific(key, made.toOpaque()) == 0 else {
            made.release()
            return nil
        }
        return made.takeUnretainedValue()
    }
}
