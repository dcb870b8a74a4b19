// swift-tools-version: 6.1
// The benchmark suite is its own package so that the root package (and CI's `swift test`)
// never resolves or builds package-benchmark.
import PackageDescription

let package = Package(
    name: "SelectorForwardingBenchmarks",
    dependencies: [
        // Named: a path dependency's identity is otherwise the checkout's directory name.
        .package(name: "SelectorForwarding", path: ".."),
        // MallocInterposer only (mallocCountTotal): the default RuntimeInterposer trait would
        // also resolve swift-runtime-interposer, which serves ARC metrics this suite does not use.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The floor and the C-side loops, compiled as plain C against the public C header.
        .target(
            name: "DispatchFixtures",
            dependencies: [.product(name: "DynamicRuntime", package: "SelectorForwarding")]
        ),
        // Benchmark targets live in Benchmarks/<name>/: the benchmark plugin looks for them there.
        .executableTarget(
            name: "RuntimeBenchmarks",
            dependencies: [
                "DispatchFixtures",
                .product(name: "DynamicRuntime", package: "SelectorForwarding"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/RuntimeBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
