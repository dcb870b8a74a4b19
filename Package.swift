// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "SelectorForwarding",
    products: [
        .library(name: "DynamicRuntime", targets: ["DynamicRuntime"]),
        .library(name: "MessageThrottle", targets: ["MessageThrottle"]),
        // Selector timers, perform requests, observers, a stall monitor and a run-loop executor,
        // on Foundation's RunLoop: the only library module that imports Foundation.
        .library(name: "SelectorRunLoop", targets: ["SelectorRunLoop"]),
        // The C library: libSelectorForwarding.so, installed with include/SelectorForwarding.h and
        // a pkg-config file by scripts/install-c-library.sh (docs/c-api.md).
        .library(name: "SelectorForwarding", type: .dynamic, targets: ["DynamicRuntime", "MessageThrottle", "MessageThrottleCAPI"]),
        .executable(name: "forwarding", targets: ["forwarding"]),
        // The benchmark cases, shared by `forwarding bench` and the package-benchmark suite in
        // Benchmarks/ (which depends on this package by path). Not API: no stability promised,
        // hence the underscore. A product because nothing else reaches it from Benchmarks/:
        // SwiftPM refuses target paths outside a package's root, and a symlinked copy of the
        // sources clashes with these targets' names ("target names need to be unique across
        // the package graph"). It adds no dependency to a user's graph.
        .library(name: "_BenchFixtures", targets: ["BenchFixtures"]),
    ],
    // Only the documentation plugin (`swift package generate-documentation`): it is never
    // built into a product, so a package using the libraries builds nothing else.
    dependencies: [
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The dispatch fast path, object header, cache and C API live in C.
        .target(
            name: "CDynamicRuntime",
            path: "CDynamicRuntime",
            publicHeadersPath: "include",
            // internal/ holds the private header: the module map reaches it, installs do not.
            cSettings: [.headerSearchPath("internal")],
            linkerSettings: [.linkedLibrary("ffi")]
        ),
        .target(
            name: "DynamicRuntime",
            dependencies: ["CDynamicRuntime"]
        ),
        // The throttle engine's C side: the rules' C API header and the engine's thread state.
        .target(
            name: "CMessageThrottle",
            dependencies: ["CDynamicRuntime"],
            path: "CMessageThrottle",
            publicHeadersPath: "include",
            cSettings: [.headerSearchPath("internal")]
        ),
        .target(
            name: "MessageThrottle",
            dependencies: ["DynamicRuntime", "CMessageThrottle"]
        ),
        .target(
            name: "SelectorRunLoop",
            dependencies: ["DynamicRuntime", "MessageThrottle"]
        ),
        // The C API's throttle rules: it needs both modules above, so it is a module of its own,
        // bundled into libSelectorForwarding.so.
        .target(name: "MessageThrottleCAPI", dependencies: ["DynamicRuntime", "MessageThrottle", "CMessageThrottle"]),
        .executableTarget(
            name: "forwarding",
            dependencies: [
                "DynamicRuntime",
                "MessageThrottle",
                "SelectorRunLoop",
                "BenchFixtures",
                "MallocCounter",
            ]
        ),
        // Sources/ holds the products; Fixtures/ and Fuzz/ what only benchmarks, tests and
        // fuzzing use. Benchmarks (docs/performance.md): one definition of every measured class,
        // method body and loop, used by `forwarding bench` and by Benchmarks/ (package-benchmark
        // lives there only). DispatchFixtures is plain C against the public C header: the
        // method body of the floor and the loops that measure the C API from C.
        .target(name: "DispatchFixtures", dependencies: ["CDynamicRuntime", "CMessageThrottle"], path: "Fixtures/DispatchFixtures"),
        .target(name: "BenchFixtures", dependencies: ["DispatchFixtures", "CDynamicRuntime", "DynamicRuntime", "MessageThrottle", "MessageThrottleCAPI", "SelectorRunLoop"],
                path: "Fixtures/BenchFixtures"),
        // Counts heap allocations for `forwarding bench` by replacing malloc in that executable
        // only (the suite counts with package-benchmark's own interposer instead).
        .target(name: "MallocCounter", path: "Fixtures/MallocCounter"),
        // C code that uses only the public C header, driven by CInteropTests.
        .target(
            name: "CInteropFixtures",
            dependencies: ["CDynamicRuntime", "DynamicRuntime", "MessageThrottleCAPI"],
            path: "Tests/CInteropFixtures"
        ),
        // What every test target shares: unique class names, the lock box, the known-bug skip.
        .target(name: "TestSupport", dependencies: ["DynamicRuntime"], path: "Tests/TestSupport"),
        .testTarget(name: "DynamicRuntimeTests", dependencies: ["DynamicRuntime", "TestSupport"]),
        .testTarget(name: "MessageThrottleTests", dependencies: ["MessageThrottle", "TestSupport"]),
        .testTarget(name: "SelectorRunLoopTests", dependencies: ["SelectorRunLoop"]),
        .testTarget(name: "CInteropTests", dependencies: ["CInteropFixtures", "DynamicRuntime"]),

        // Reliability (docs/reliability.md). The fuzzed logic is a library so that XCTest replays
        // the corpus; SFFuzz drives it under libFuzzer when built with -DFUZZING (scripts/fuzz.sh)
        // and runs a seeded random loop otherwise.
        .target(name: "FuzzTargets", dependencies: ["DynamicRuntime", "CDynamicRuntime"], path: "Fuzz/FuzzTargets"),
        .executableTarget(name: "SFFuzz", dependencies: ["FuzzTargets"], path: "Fuzz/SFFuzz"),
        .testTarget(name: "FuzzTests", dependencies: ["FuzzTargets"]),
        // Class names containing "Stress" or "Concurrency" also run under TSan in .ci/run.
        .testTarget(name: "StressTests", dependencies: ["MessageThrottle", "TestSupport"]),
        .testTarget(name: "ReliabilityTests", dependencies: ["DynamicRuntime", "MessageThrottle", "TestSupport"]),
        // Runs the built `forwarding` executable as a user would; no dependency, so that the
        // executable's malloc counter stays out of the test process.
        .testTarget(name: "ForwardingToolTests"),
    ]
)
