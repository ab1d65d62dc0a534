/// The Model layer of an app, injected at app start and handed to every ViewModel through its context:
/// a typed container keyed by type.
///
/// ```swift
/// var services = Services()
/// services.register(Person(firstName: "David", lastName: "Blaine"))
/// services.register(LiveAuth() as any AuthService, as: (any AuthService).self)
/// // in a ViewModel:
/// let auth = try context.services.require((any AuthService).self)
/// ```
///
/// Services are shared by every session, so they are `Sendable`.
public struct Services: Sendable {
    private var storage: [ObjectIdentifier: any Sendable] = [:]

    /// No services.
    public init() {}

    /// Registers `service` under `type`, replacing one registered before.
    /// - Parameters:
    ///   - service: the service.
    ///   - type: the key; defaults to the service's own type, or give a protocol's existential.
    public mutating func register<Service: Sendable>(_ service: Service, as type: Service.Type = Service.self) {
        storage[ObjectIdentifier(type)] = service
    }

    /// The service registered under `type`, or nil.
    /// - Parameter type: the key it was registered under.
    public subscript<Service>(_ type: Service.Type) -> Service? {
        storage[ObjectIdentifier(type)] as? Service
    }

    /// The service registered under `type`; throws `missing_service` when there is none, which fails
    /// the binding of the page instead of trapping.
    /// - Parameter type: the key it was registered under.
    public func require<Service>(_ type: Service.Type) throws(PageError) -> Service {
        guard let service = self[type] else {
            throw PageError(.missingService, "no service registered for \(type)")
        }
        return service
    }
}
