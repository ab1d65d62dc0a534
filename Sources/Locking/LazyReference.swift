import Synchronization

/// A reference made at most once, by whichever thread first needs it, and read without a lock: what the standard
/// library's `AtomicLazyReference` does, but inlinable, so that a read is one atomic load. (`AtomicLazyReference`'s
/// `load` is not inlinable: every read looks up `Unmanaged<Instance>`'s generic metadata, some 330 instructions.)
///
/// ```swift
/// let cache = LazyReference<Cache>()
/// let made = cache.load(orStoring: Cache())
/// ```
public struct LazyReference<Instance: AnyObject>: ~Copyable {
    /// The instance's address (retained by this value), or 0 before one is stored.
    @usableFromInline let bits = Atomic<UInt>(0)

    /// An empty reference.
    @inlinable
    public init() {}

    deinit {
        let stored = bits.load(ordering: .acquiring)
        if let pointer = UnsafeRawPointer(bitPattern: stored) {
            Unmanaged<Instance>.fromOpaque(pointer).release()
        }
    }

    /// The instance stored, or nil before one is.
    @inlinable
    public func load() -> Instance? {
        guard let pointer = UnsafeRawPointer(bitPattern: bits.load(ordering: .acquiring)) else { return nil }
        return Unmanaged<Instance>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// The instance stored, storing `make()` first when there is none (a thread that loses the race to store
    /// one gets the winner's; its own is released).
    @inlinable
    public func load(orStoring make: @autoclosure () -> Instance) -> Instance {
        load() ?? storeIfNil(make())
    }

    /// Stores `instance` unless one is stored already; returns the one stored (this one, or the earlier one).
    @inlinable
    public func storeIfNil(_ instance: Instance) -> Instance {
        let retained = Unmanaged.passRetained(instance)
        let desired = UInt(bitPattern: retained.toOpaque())
        let (exchanged, original) = bits.compareExchange(
            expected: 0, desired: desired, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        if exchanged { return instance }
        retained.release()
        guard let pointer = UnsafeRawPointer(bitPattern: original) else { return instance }
        return Unmanaged<Instance>.fromOpaque(pointer).takeUnretainedValue()
    }
}

// Sendable when the instance is: the bits are an `Atomic`, and the instance is retained once, by this value, from its
// store on; what is shared across threads is the instance.
extension LazyReference: Sendable where Instance: Sendable {}
