// What a message send costs, layer by layer, against a direct call of the same C function.
// The cases (ids, names, fixtures and loops) are BenchFixtures' `BenchCase.all`, the same list
// `forwarding bench` runs; ids match docs/performance.md.
//
// Every benchmark makes `scaledIterations.count` calls per iteration, so the scaled metrics
// (marked `*` in the output) are per call: wall-clock ns and heap allocations (mallocCountTotal).
// Wall clock is whole nanoseconds there, too coarse for calls of 1-5 ns, so each benchmark also
// records "ps/call": picoseconds of CPU time per call (and thread), timed around its loop.

import Benchmark
import BenchFixtures
import Glibc

let psPerCall = BenchmarkMetric.custom("ps/call", polarity: .prefersSmaller, useScalingFactor: false)

/// A configuration whose setup builds the fixtures, so that building them is never timed.
/// `.mega` (a million calls an iteration) for calls of a few ns keeps the framework's own cost
/// out; `.kilo` for calls of 50 ns and more (`BenchCase.slow`).
func configuration(_ scaling: BenchmarkScalingFactor) -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal, psPerCall],
        scalingFactor: scaling,
        maxDuration: .seconds(1),
        maxIterations: scaling == .mega ? 1_000 : 10_000,
        setup: { _ = Suite.shared }
    )
}

/// The fixtures and every case's loop over them, built once per process by the first
/// benchmark's setup (never timed).
final class Suite: @unchecked Sendable {
    static let shared = try! Suite()

    let fixtures: BenchFixtures
    let bodies: [String: BenchCase.Body]

    private init() throws {
        let fixtures = try BenchFixtures()
        try fixtures.verify()
        self.fixtures = fixtures
        bodies = Dictionary(uniqueKeysWithValues: BenchCase.all.map { ($0.id, $0.body(for: fixtures)) })
    }
}

/// Runs `loop(n)` for the iteration's calls and records picoseconds of CPU time per call and
/// thread. CPU time, unlike the wall clock, leaves out the slices the scheduler gives to other
/// processes on a shared machine.
@inline(__always)
func measure(_ benchmark: Benchmark, threads: Int = 1, _ loop: (Int) throws -> Int) rethrows {
    let n = benchmark.scaledIterations.count
    let start = cpuNanoseconds()
    blackHole(try loop(n))
    let elapsed = cpuNanoseconds() - start
    benchmark.measurement(psPerCall, Int(elapsed * 1_000 / UInt64(n * threads)))
}

/// CPU time used by all of the process's threads.
func cpuNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

let benchmarks: @Sendable () -> Void = {
    for c in BenchCase.all {
        let id = c.id, threads = c.threads
        Benchmark("\(id) \(c.name)", configuration: configuration(c.slow ? .kilo : .mega)) { b in
            let body = Suite.shared.bodies[id]!
            measure(b, threads: threads) { n in try! body(n) }
        }
    }
}
