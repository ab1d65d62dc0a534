import JSONPatch
import MVVMR
import Synchronization

/// Records the events a session's sink receives.
final class RecordedEvents: Sendable {
    private let events = Mutex<[SessionEvent]>([])
    var all: [SessionEvent] { events.withLock { $0 } }
    func append(_ event: SessionEvent) { events.withLock { $0.append(event) } }
    func take() -> [SessionEvent] {
        events.withLock { events in
            defer { events.removeAll() }
            return events
        }
    }
}

let allExampleUnits: [UnitCase] = [
    .greeting, .counter, .login, .main, .editor, .about, .search, .dashboard, .throwing, .badPath, .needsService,
]

func exampleServices(counter: LifeCounter? = nil) -> Services {
    var services = Services()
    services.register(Person(firstName: "David", lastName: "Blaine"))
    services.register(FixedSearch() as any SearchService, as: (any SearchService).self)
    if let counter { services.register(counter) }
    return services
}

func makeSession(
    root: UnitCase = .greeting, services: Services = exampleServices(), clock: SessionClock = .virtual,
    historyLimit: Int = 64
) -> (PageSession, RecordedEvents) {
    let events = RecordedEvents()
    let session = PageSession(
        registry: UnitRegistry(root: root, units: allExampleUnits), services: services, clock: clock,
        historyLimit: historyLimit, eventSink: { events.append($0) })
    return (session, events)
}

extension SessionEvent {
    /// A short description for order assertions: `patch greeting 1`, `navigation push main`, `snapshot x 0`.
    var summary: String {
        switch kind {
        case .patch(let patch): return "patch \(patch.unit) \(patch.rev)"
        case .navigation(let navigation): return "navigation \(navigation.kind.rawValue) \(navigation.unit)"
        case .snapshot(let snapshot): return "snapshot \(snapshot.unit) \(snapshot.rev)"
        }
    }
}

func pointer(_ text: String) -> JSONPointer {
    // Test paths are literals known to be valid.
    (try? JSONPointer(text)) ?? .root
}
