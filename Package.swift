// swift-tools-version: 6.0
import PackageDescription

/// Release builds leave out the run-time exclusivity checks: the server's hot paths touch class properties
/// (stream nodes, page documents, the session's state) dozens of times per action, and each check cost about
/// 80 instructions, some 6,000 of an action's 90,000 (BENCHMARKS.md). Debug builds, which every test runs,
/// and the ThreadSanitizer build keep them, so a violation still traps where the tests can see it.
let releaseSettings: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "MVVMR",
    products: [
        .library(name: "MicroHTTP", targets: ["MicroHTTP"]),
        .library(name: "JSONPatch", targets: ["JSONPatch"]),
        .library(name: "MVVMR", targets: ["MVVMR"]),
        .library(name: "MVVMRTesting", targets: ["MVVMRTesting"]),
        .library(name: "MVVMRServer", targets: ["MVVMRServer"]),
        .library(name: "MVVMRProtocol", targets: ["MVVMRProtocol"]),
        .library(name: "MVVMRClient", targets: ["MVVMRClient"]),
        .executable(name: "mvvmr-demo", targets: ["MVVMRDemo"]),
        .executable(name: "json-patch", targets: ["json-patch"]),
    ],
    targets: [
        // The project's one lock type (a pthread mutex under ThreadSanitizer, `Mutex` otherwise).
        .target(name: "Locking", swiftSettings: releaseSettings),
        // libmicrohttpd, plus prefixed non-variadic shims for what Swift cannot import.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // SQLite 3, for the session store's file; a prefixed shim for SQLITE_TRANSIENT, a macro Swift cannot import.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // nats.c, the NATS client with JetStream, for the NATS session store (`SESSION_STORE=nats://…`).
        .systemLibrary(
            name: "CNATS",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]
        ),
        // jemalloc, the demo server's allocator in place of glibc's: the action path allocates on the request threads
        // and frees on the store's threads, which glibc's per-thread caches serve badly (BENCHMARKS.md, "Allocator").
        // Its configuration is compiled in (`malloc_conf`); it needs libjemalloc-dev (scripts/install-deps.sh).
        .target(name: "CJemalloc", linkerSettings: [.linkedLibrary("jemalloc")]),
        // A small HTTP server over libmicrohttpd; knows nothing of MVVM.
        .target(name: "MicroHTTP", dependencies: ["CMicroHTTPD", "Locking"], swiftSettings: releaseSettings),
        // JSON values, JSON Pointer, a Codable coder for JSON values, RFC 6902 apply and diff; no other dependency.
        .target(name: "JSONPatch", swiftSettings: releaseSettings),
        // The page protocol's wire messages: one byte encoder, one decoder and the OpenAPI schema of each, shared by
        // the server and the Swift client.
        .target(name: "MVVMRProtocol", dependencies: ["JSONPatch"], swiftSettings: releaseSettings),
        // The programming model: View, ViewModel, UnitCase, Binder, Router, Signal/Driver, Page.
        .target(name: "MVVMR", dependencies: ["JSONPatch", "Locking"], swiftSettings: releaseSettings),
        // Tests pages without HTTP: the exhaustive PageTester.
        .target(name: "MVVMRTesting", dependencies: ["MVVMR", "JSONPatch"], swiftSettings: releaseSettings),
        // Sessions, the page protocol's endpoints, SSE, configuration, health, metrics, the session stores.
        .target(
            name: "MVVMRServer", dependencies: ["MicroHTTP", "MVVMR", "MVVMRProtocol", "JSONPatch", "Locking", "CSQLite", "CNATS"],
            swiftSettings: releaseSettings),
        // The Swift client SDK (URLSession).
        .target(name: "MVVMRClient", dependencies: ["MVVMRProtocol", "JSONPatch"], swiftSettings: releaseSettings),
        // The demo's pages (no HTTP in them) and the demo server, the main job.
        .target(name: "DemoPages", dependencies: ["MVVMR", "JSONPatch"], swiftSettings: releaseSettings),
        .executableTarget(
            name: "MVVMRDemo", dependencies: ["DemoPages", "MVVMRServer", "CJemalloc"], path: "Sources/DemoApp",
            swiftSettings: releaseSettings),
        // `json-patch diff A B` / `json-patch apply DOC PATCH`.
        .executableTarget(name: "json-patch", dependencies: ["JSONPatch"]),
        // Benchmark programs, built in release mode by Benchmarks/run.py.
        .executableTarget(
            name: "microhttp-bench",
            dependencies: ["MicroHTTP"],
            path: "Benchmarks/Sources/microhttp-bench"
        ),
        .executableTarget(
            name: "page-bench",
            dependencies: ["DemoPages", "MVVMR", "MVVMRServer"],
            path: "Benchmarks/Sources/page-bench"
        ),
        .executableTarget(
            name: "patch-bench",
            dependencies: ["JSONPatch"],
            path: "Benchmarks/Sources/patch-bench"
        ),
        .testTarget(name: "MicroHTTPTests", dependencies: ["MicroHTTP", "Locking"]),
        .testTarget(name: "JSONPatchTests", dependencies: ["JSONPatch", "json-patch"]),
        .testTarget(name: "MVVMRTests", dependencies: ["MVVMR", "MVVMRTesting", "JSONPatch", "Locking"]),
        .testTarget(name: "MVVMRTestingTests", dependencies: ["MVVMRTesting", "MVVMR", "JSONPatch"]),
        .testTarget(name: "MVVMRServerTests", dependencies: ["MVVMRServer", "MVVMR", "MVVMRProtocol", "JSONPatch", "Locking"]),
        .testTarget(name: "MVVMRProtocolTests", dependencies: ["MVVMRProtocol", "JSONPatch"]),
        .testTarget(name: "MVVMRClientTests", dependencies: ["MVVMRClient", "MVVMRServer", "MVVMR", "JSONPatch"]),
        // docs/CLIENT.md's complete example, run against the demo's pages (a target of its own: the client tests' units
        // share names with the demo's).
        .testTarget(name: "ClientGuideTests", dependencies: ["MVVMRClient", "MVVMRServer", "DemoPages", "JSONPatch"]),
        // Fixtures/ holds session logs taken from real servers, read by path (not bundled).
        .testTarget(
            name: "DemoPagesTests", dependencies: ["DemoPages", "MVVMRTesting", "MVVMR", "JSONPatch"], exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
