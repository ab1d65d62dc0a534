import MicroHTTP

#if canImport(Glibc)
    import Glibc
#endif

// Until the page server exists, the demo serves the browser client's files and a health check.
// Settings: --port/PORT, --host/HOST, --public-dir/PUBLIC_DIR (flag wins over environment).

func setting(_ flag: String, _ environment: String, default fallback: String) -> String {
    let arguments = CommandLine.arguments
    if let index = arguments.firstIndex(of: flag), index + 1 < arguments.count { return arguments[index + 1] }
    if let value = getenv(environment) { return String(cString: value) }
    return fallback
}

if CommandLine.arguments.contains("--help") {
    print("""
        mvvmr-demo: the MVVMR demo server.
          --port PORT            (PORT, default 8080)
          --host HOST            (HOST, default 0.0.0.0)
          --public-dir DIR       (PUBLIC_DIR, default Public)
        """)
    exit(0)
}

// Block the stop signals before any thread starts, so that every thread inherits the mask and the
// main thread alone receives them through sigwait.
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGTERM)
sigaddset(&stopSignals, SIGINT)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

var configuration = HTTPServerConfiguration()
configuration.host = setting("--host", "HOST", default: "0.0.0.0")
configuration.port = Int(setting("--port", "PORT", default: "8080")) ?? 8080
let publicDirectory = setting("--public-dir", "PUBLIC_DIR", default: "Public")

var router = HTTPRouter()
router.get("/healthz") { _ in .json(Array(#"{"status":"ok"}"#.utf8)) }
router.fallback = StaticFiles(directory: publicDirectory).handler

let server = HTTPServer(configuration: configuration, router: router)
do {
    try server.start()
} catch {
    print("mvvmr-demo: \(error)")
    exit(1)
}
print("mvvmr-demo listening on http://\(configuration.host):\(server.port)")
fflush(nil)

var received: Int32 = 0
sigwait(&stopSignals, &received)
print("mvvmr-demo: stopping")
fflush(nil)
server.stop(gracePeriod: .seconds(10))
exit(0)
