import CJemalloc
import DemoPages
import MVVMRServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// mvvmr-demo: the demo pages served over the page protocol, with the browser client from PUBLIC_DIR.

// Stop signals are blocked before any thread starts, so that every thread inherits the mask and the
// main thread alone receives them (through sigwait) to stop gracefully.
PageServer.blockStopSignals()

let arguments = Array(CommandLine.arguments.dropFirst())
var environment: [String: String] = [:]
for name in ServerConfiguration.environmentVariableNames + ["EMPLOYEE_LATENCY_MS", "DATA_DIR"] {
    if let value = getenv(name) { environment[name] = String(cString: value) }
}

let demoSettingsHelp = """
      --employee-latency-ms VALUE         EMPLOYEE_LATENCY_MS
          simulated latency of the employees service (default: 300)
      --data-dir VALUE                    DATA_DIR
          directory of the demo's data files (default: Data)
    """

if arguments.contains("--help") || arguments.contains("-h") {
    print("""
        mvvmr-demo: the MVVMR demo pages over the page protocol (docs/PROTOCOL.md).

        Usage: mvvmr-demo [--healthcheck] [settings]

          --healthcheck      request /healthz on 127.0.0.1:PORT and exit 0 when it answers 200

        \(ServerConfiguration.helpText)

        Demo settings:
        \(demoSettingsHelp)
        """)
    exit(0)
}

// The demo's own settings are taken out before the server's are read.
var serverArguments: [String] = []
var employeeLatency = Int(environment["EMPLOYEE_LATENCY_MS"] ?? "") ?? 300
var dataDirectory = environment["DATA_DIR"] ?? "Data"
var index = 0
while index < arguments.count {
    let argument = arguments[index]
    if argument == "--employee-latency-ms" || argument == "--data-dir", index + 1 < arguments.count {
        if argument == "--data-dir" {
            dataDirectory = arguments[index + 1]
        } else if let value = Int(arguments[index + 1]), value >= 0 {
            employeeLatency = value
        } else {
            print("mvvmr-demo: --employee-latency-ms: '\(arguments[index + 1])' is not a whole number of milliseconds.")
            exit(2)
        }
        index += 2
        continue
    }
    serverArguments.append(argument)
    index += 1
}

let configuration: ServerConfiguration
do {
    configuration = try ServerConfiguration.parse(arguments: serverArguments, environment: environment)
} catch {
    print("mvvmr-demo: \(error)")
    exit(2)
}

if arguments.contains("--healthcheck") {
    exit(Healthcheck.run(port: configuration.port))
}

// Every session is a log of its inputs in this store, so a restart (or a crash) loses none of them.
// Topic messages (the board) go to this node's sessions, or with NATS to every node's.
let store: any SessionStore
let topicBus: any TopicBus
do {
    store = try SessionStores.open(configuration)
    topicBus = try TopicBuses.open(configuration)
} catch {
    print("mvvmr-demo: the session store \(configuration.sessionStore) cannot be opened: \(error)")
    exit(1)
}

let server = PageServer(
    units: DemoApp.units, root: DemoApp.root,
    services: DemoApp.services(employeeLatency: .milliseconds(employeeLatency), dataDirectory: dataDirectory),
    configuration: configuration, store: store, topicBus: topicBus)
do {
    try server.start()
} catch {
    print("mvvmr-demo: \(error)")
    exit(1)
}
// A URL to open: bound to every address, the server is reached on localhost. Flushed at once: with standard output
// piped (a container's log), `print` holds its text in a block buffer until the process ends.
// The allocator is named too: jemalloc, linked in place of glibc's malloc (Package.swift), or glibc's if it is not.
let allocator = mvvmr_jemalloc_version().map { "jemalloc \(String(cString: $0))" } ?? "glibc"
let address = ServerConfiguration.browsableURL(host: configuration.host, port: server.port)
print("mvvmr-demo: serving on \(address) (allocator: \(allocator))")
fflush(nil)  // every output stream: `stdout` itself is a C global Swift 6 will not touch
server.runUntilStopSignal()
store.close()
exit(0)
