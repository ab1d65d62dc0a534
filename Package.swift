// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "MVVMR",
    products: [
        .library(name: "MicroHTTP", targets: ["MicroHTTP"]),
        .executable(name: "mvvmr-demo", targets: ["DemoApp"]),
    ],
    targets: [
        // The project's one lock type (a pthread mutex under ThreadSanitizer, `Mutex` otherwise).
        .target(name: "Locking"),
        // libmicrohttpd, plus prefixed non-variadic shims for what Swift cannot import.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // A small HTTP server over libmicrohttpd; knows nothing of MVVM.
        .target(name: "MicroHTTP", dependencies: ["CMicroHTTPD", "Locking"]),
        // The demo server (the main job).
        .executableTarget(name: "DemoApp", dependencies: ["MicroHTTP"]),
        // Benchmark servers, built in release mode by Benchmarks/run.
        .executableTarget(
            name: "microhttp-bench",
            dependencies: ["MicroHTTP"],
            path: "Benchmarks/Sources/microhttp-bench"
        ),
        .testTarget(name: "MicroHTTPTests", dependencies: ["MicroHTTP", "Locking"]),
    ],
    swiftLanguageModes: [.v6]
)
