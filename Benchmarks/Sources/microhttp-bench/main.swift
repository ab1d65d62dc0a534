import MicroHTTP

#if canImport(Glibc)
    import Glibc
#endif

// MicroHTTP's side of the listener benchmark: one route answering the same bytes as Benchmarks/c-server.
// Usage: microhttp-bench PORT

let port = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 8082 : 8082
let body = Array(#"{"unit":"greeting","rev":0,"view":{"greeting":"Say hello to who?"}}"#.utf8)

var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGTERM)
sigaddset(&stopSignals, SIGINT)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

var router = HTTPRouter()
router.get("/api/pages/greeting") { _ in .json(body) }
var configuration = HTTPServerConfiguration()
configuration.port = port
let server = HTTPServer(configuration: configuration, router: router)
do {
    try server.start()
} catch {
    print("microhttp-bench: \(error)")
    exit(1)
}
print("microhttp-bench listening on \(server.port)")
fflush(nil)
var received: Int32 = 0
sigwait(&stopSignals, &received)
server.stop(gracePeriod: .seconds(1))
