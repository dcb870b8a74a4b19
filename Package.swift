// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "SelectorForwarding",
    products: [
        .library(name: "DynamicRuntime", targets: ["DynamicRuntime"]),
        .library(name: "MessageThrottle", targets: ["MessageThrottle"]),
        .executable(name: "forwarding", targets: ["forwarding"]),
        // The benchmark cases, shared by `forwarding bench` and the package-benchmark suite in
        // Benchmarks/ (which depends on this package by path). Not API: no stability promised.
        .library(name: "BenchFixtures", targets: ["BenchFixtures"]),
    ],
    // Only the documentation plugin (`swift package generate-documentation`): it is never
    // built into a product, so a package using the libraries builds nothing else.
    dependencies: [
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The dispatch fast path, object header, cache and C API live in C.
        .target(
            name: "CShims",
            path: "CShims",
            publicHeadersPath: "include",
            linkerSettings: [.linkedLibrary("ffi")]
        ),
        .target(
            name: "DynamicRuntime",
            dependencies: ["CShims"]
        ),
        .target(
            name: "MessageThrottle",
            dependencies: ["DynamicRuntime"]
        ),
        .executableTarget(
            name: "forwarding",
            dependencies: [
                "DynamicRuntime",
                "MessageThrottle",
                "BenchFixtures",
                "MallocCounter",
            ]
        ),
        // Benchmarks (docs/performance.md): one definition of every measured class, method body
        // and loop, used by `forwarding bench` and by Benchmarks/ (package-benchmark lives
        // there only). DispatchFixtures is plain C against the public C header: the method
        // body of the floor and the loops that measure the C API from C.
        .target(name: "DispatchFixtures", dependencies: ["CShims"], path: "Sources/DispatchFixtures"),
        .target(name: "BenchFixtures", dependencies: ["DispatchFixtures", "CShims", "DynamicRuntime", "MessageThrottle"]),
        // Counts heap allocations for `forwarding bench` by replacing malloc in that executable
        // only (the suite counts with package-benchmark's own interposer instead).
        .target(name: "MallocCounter", path: "Sources/MallocCounter"),
        // C code that uses only the public C header, driven by CInteropTests.
        .target(
            name: "CInteropFixtures",
            dependencies: ["CShims", "DynamicRuntime"],
            path: "Tests/CInteropFixtures"
        ),
        .testTarget(name: "DynamicRuntimeTests", dependencies: ["DynamicRuntime"]),
        .testTarget(name: "MessageThrottleTests", dependencies: ["MessageThrottle"]),
        .testTarget(name: "CInteropTests", dependencies: ["CInteropFixtures", "DynamicRuntime"]),

        // Reliability (docs/reliability.md). The fuzzed logic is a library so that XCTest replays
        // the corpus; SFFuzz drives it under libFuzzer when built with -DFUZZING (scripts/fuzz.sh)
        // and runs a seeded random loop otherwise.
        .target(name: "FuzzTargets", dependencies: ["DynamicRuntime", "CShims"], path: "Sources/FuzzTargets"),
        .executableTarget(name: "SFFuzz", dependencies: ["FuzzTargets"], path: "Sources/SFFuzz"),
        .testTarget(name: "FuzzTests", dependencies: ["FuzzTargets"]),
        // Class names containing "Stress" or "Concurrency" also run under TSan in .ci/run.
        .testTarget(name: "StressTests", dependencies: ["MessageThrottle"]),
        .testTarget(name: "ReliabilityTests", dependencies: ["DynamicRuntime", "MessageThrottle"]),
    ]
)
