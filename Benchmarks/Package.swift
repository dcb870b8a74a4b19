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
        // Benchmark targets live in Benchmarks/<name>/: the benchmark plugin looks for them there.
        // The cases themselves (classes, method bodies, loops, the C loops) are the root
        // package's BenchFixtures library, shared with `forwarding bench`.
        .executableTarget(
            name: "RuntimeBenchmarks",
            dependencies: [
                .product(name: "_BenchFixtures", package: "SelectorForwarding"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/RuntimeBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
