// What a message send costs, layer by layer, against a direct call of the same C function.
// Case numbers match docs/performance.md and `forwarding bench`.
//
// Every benchmark makes `scaledIterations.count` calls per iteration, so the scaled metrics
// (marked `*` in the output) are per call: wall-clock ns and heap allocations (mallocCountTotal).
// Wall clock is whole nanoseconds there, too coarse for calls of 1-5 ns, so each benchmark also
// records "ps/call": picoseconds of CPU time per call (and thread), timed around its loop.

import Benchmark
import CShims
import Dispatch
import DispatchFixtures
import DynamicRuntime
import Glibc

let psPerCall = BenchmarkMetric.custom("ps/call", polarity: .prefersSmaller, useScalingFactor: false)

/// A configuration whose setup builds the fixtures, so that building them is never timed.
/// `.mega` (a million calls an iteration) for calls of a few ns keeps the framework's own cost
/// out; `.kilo` for calls of 50 ns and more.
func configuration(_ scaling: BenchmarkScalingFactor) -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal, psPerCall],
        scalingFactor: scaling,
        maxDuration: .seconds(1),
        maxIterations: scaling == .mega ? 1_000 : 10_000,
        setup: { _ = Fixtures.shared }
    )
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
    let f = { Fixtures.shared }

    // MARK: 1 — the floor: the method's C function, called through a pointer

    Benchmark("1 floor: direct call, C loop", configuration: configuration(.mega)) { b in
        measure(b) { n in sfb_loop_direct(f().floor, f().ref.raw, f().add.raw, n) }
    }
    Benchmark("1 floor: direct call, Swift loop", configuration: configuration(.mega)) { b in
        let floor = f().floor, obj = f().ref.raw, sel = f().add.raw
        measure(b) { n in
            var acc = 0
            for i in 0..<n { acc &+= floor(obj, sel, i, 1) }
            return acc
        }
    }

    // MARK: 2 — cached sends: the C API from C, typed and dynamic sends from Swift

    Benchmark("2a sf_msg_lookup + call, C loop", configuration: configuration(.mega)) { b in
        measure(b) { n in sfb_loop_lookup_call(f().ref.raw, f().add.raw, n) }
    }
    Benchmark("2b typed send, C-function IMP", configuration: configuration(.mega)) { b in
        let ref = f().ref, add = f().add
        measure(b) { n in
            var acc = 0
            for i in 0..<n { let r: Int = try! ref.send(add, i, 1); acc &+= r }
            return acc
        }
    }
    Benchmark("2c dynamic send (ffi_call)", configuration: configuration(.kilo)) { b in
        let ref = f().ref, add = f().add
        measure(b) { n in
            var acc = 0
            for i in 0..<n { acc &+= try! ref.send(add, i, 1).intValue! }
            return acc
        }
    }

    // MARK: 3 — a closure IMP (libffi closure over a Swift closure) against a C function

    Benchmark("3a sf_msg_lookup + call, closure IMP, C loop", configuration: configuration(.kilo)) { b in
        measure(b) { n in sfb_loop_lookup_call(f().ref.raw, f().closureAdd.raw, n) }
    }
    Benchmark("3b typed send, closure IMP", configuration: configuration(.kilo)) { b in
        let ref = f().ref, sel = f().closureAdd
        measure(b) { n in
            var acc = 0
            for i in 0..<n { let r: Int = try! ref.send(sel, i, 1); acc &+= r }
            return acc
        }
    }

    // MARK: 4-6 — hooks (pass-through, drop, invocation capture and replay)
    // To be added with the hook module; nothing is measured here yet.

    // MARK: 7 — the missing-method path (forwarding stages to be added with forwarding)

    Benchmark("7a missing: sf_msg_lookup -> NULL, C loop", configuration: configuration(.kilo)) { b in
        measure(b) { n in sfb_loop_lookup_missing(f().ref.raw, f().missing.raw, n) }
    }
    Benchmark("7b missing: typed send throws, caught", configuration: configuration(.kilo)) { b in
        let ref = f().ref, sel = f().missing
        measure(b) { n in
            var acc = 0
            for i in 0..<n {
                do { let r: Int = try ref.send(sel, i, 1); acc &+= r } catch { acc &+= 1 }
            }
            return acc
        }
    }

    // MARK: 8 — MessageThrottle (a throttled send, dropped and passed through)
    // To be added with the rule engine; nothing is measured here yet.

    // MARK: 9 — scaling of the cached typed send

    for (letter, count) in zip(["a", "b", "c"], Fixtures.selectorCounts) {
        Benchmark("9\(letter) typed send, \(count) selectors cached", configuration: configuration(.mega)) { b in
            let (ref, sels) = f().wide[count]!
            measure(b) { n in
                var acc = 0
                sels.withUnsafeBufferPointer { s in
                    for i in 0..<n { let r: Int = try! ref.send(s[i & 63], i, 1); acc &+= r }
                }
                return acc
            }
        }
    }
    for (letter, depth) in zip(["d", "e", "f"], Fixtures.depths) {
        Benchmark("9\(letter) typed send, hierarchy \(depth) deep", configuration: configuration(.mega)) { b in
            let ref = f().deep[depth]!, add = f().add
            measure(b) { n in
                var acc = 0
                for i in 0..<n { let r: Int = try! ref.send(add, i, 1); acc &+= r }
                return acc
            }
        }
    }
    // Each thread makes all the iteration's calls. Wall clock is per call of one thread;
    // ps/call is CPU time per call and thread, equal to 9g's when the threads do not slow each
    // other down (and only meaningful when a second core is free to run them at once).
    for (letter, threads) in zip(["g", "h"], [1, 2]) {
        Benchmark("9\(letter) typed send, \(threads) thread\(threads == 1 ? "" : "s")", configuration: configuration(.mega)) { b in
            let ref = f().ref, add = f().add
            measure(b, threads: threads) { n in
                nonisolated(unsafe) let sums = UnsafeMutableBufferPointer<Int>.allocate(capacity: threads)
                defer { sums.deallocate() }
                DispatchQueue.concurrentPerform(iterations: threads) { t in
                    var acc = 0
                    for i in 0..<n { let r: Int = try! ref.send(add, i, 1); acc &+= r }
                    sums[t] = acc
                }
                return sums.reduce(0, &+)
            }
        }
    }
}
