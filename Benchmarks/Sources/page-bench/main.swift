import DemoPages
import MVVMR
import MVVMRServer
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// The page server for the benchmarks that need more than the demo: the demo's units plus `broadcast`, a
// page whose ViewModel waits for a change of a shared service (`Broadcaster`), and `publisher`, whose
// `publish` action makes that change. Settings as for mvvmr-demo (environment variables).

/// A shared service: ViewModels wait for its next message; `publish` wakes every waiter at once.
final class Broadcaster: Sendable {
    private let waiters = Mutex<[CheckedContinuation<String, Never>]>([])

    /// Waits for the next published message.
    func nextMessage() async -> String {
        await withCheckedContinuation { continuation in
            waiters.withLock { $0.append(continuation) }
        }
    }

    /// Hands `message` to everyone waiting; returns how many were.
    func publish(_ message: String) -> Int {
        let woken = waiters.withLock { waiters in
            let all = waiters
            waiters = []
            return all
        }
        for waiter in woken { waiter.resume(returning: message) }
        return woken.count
    }
}

struct BroadcastOutput { let message: Driver<String> }

struct BroadcastView: View {
    func input(from actions: Actions<NamedAction>) -> NoInput { NoInput() }
    func bind(_ output: BroadcastOutput, to page: Page) { page.bind(output.message, at: "/message") }
}

final class BroadcastViewModel: ViewModel {
    private let broadcaster: Broadcaster
    private let scheduler: Scheduler

    init(context: UnitContext) throws {
        broadcaster = try context.services.require(Broadcaster.self)
        scheduler = context.scheduler
    }

    func transform(_ input: NoInput) -> BroadcastOutput {
        let broadcaster = self.broadcaster
        return BroadcastOutput(message: scheduler.perform { await broadcaster.nextMessage() }.asDriver(startingWith: "waiting"))
    }
}

struct PublisherInput { let publish: Signal<String> }
struct PublisherOutput { let published: Driver<String> }

struct PublisherView: View {
    func input(from actions: Actions<NamedAction>) -> PublisherInput { PublisherInput(publish: actions.signal("publish", of: String.self)) }
    func bind(_ output: PublisherOutput, to page: Page) { page.bind(output.published, at: "/published") }
}

final class PublisherViewModel: ViewModel {
    private let broadcaster: Broadcaster

    init(context: UnitContext) throws { broadcaster = try context.services.require(Broadcaster.self) }

    func transform(_ input: PublisherInput) -> PublisherOutput {
        let broadcaster = self.broadcaster
        return PublisherOutput(published: input.publish.map { message in
            "\(message) → \(broadcaster.publish(message)) pages"
        }.asDriver(startingWith: ""))
    }
}

extension UnitCase {
    static let broadcast = UnitCase("broadcast", view: BroadcastView.self, viewModel: BroadcastViewModel.self)
    static let publisher = UnitCase("publisher", view: PublisherView.self, viewModel: PublisherViewModel.self)
}

PageServer.blockStopSignals()
var environment: [String: String] = [:]
for name in ServerConfiguration.environmentVariableNames {
    if let value = getenv(name) { environment[name] = String(cString: value) }
}
let configuration: ServerConfiguration
do {
    configuration = try ServerConfiguration.parse(arguments: Array(CommandLine.arguments.dropFirst()), environment: environment)
} catch {
    print("page-bench: \(error)")
    exit(2)
}
var services = DemoApp.services(dataDirectory: getenv("DATA_DIR").map { String(cString: $0) } ?? "Data")
services.register(Broadcaster())
let server = PageServer(
    units: DemoApp.units + [.broadcast, .publisher], root: DemoApp.root, services: services, configuration: configuration)
do {
    try server.start()
} catch {
    print("page-bench: \(error)")
    exit(1)
}
print("page-bench: serving on \(server.port)")
server.runUntilStopSignal()
exit(0)
