// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "SelectorForwarding",
    products: [
        .library(name: "DynamicRuntime", targets: ["DynamicRuntime"]),
        .library(name: "MessageThrottle", targets: ["MessageThrottle"]),
        .executable(name: "forwarding", targets: ["forwarding"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
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
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
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
