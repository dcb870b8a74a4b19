import BenchFixtures
import Glibc
import MallocCounter

/// Times cases: calibration picks each case's batch size, then `rounds` rounds time every case.
struct BenchRunner {
    let rounds: Int
    let sampleNanos: UInt64
    /// When set: one batch of exactly this many calls per case, no calibration.
    var fixedCalls: Int? = nil

    /// Keeps every checksum observable, so no loop can be optimized away.
    nonisolated(unsafe) static var sink = 0

    /// ns/call per case (in `cases` order), one entry per round.
    func run(_ cases: [BenchCase], _ bodies: [BenchCase.Body], progress: Progress) throws -> [[Double]] {
        var batch: [Int] = []
        for (i, c) in cases.enumerated() {
            progress.update("calibrating", "[\(i + 1)/\(cases.count)] \(c.id) \(c.name)")
            batch.append(try fixedCalls ?? calibrate(c, bodies[i]))
        }
        var timings = Array(repeating: [Double](), count: cases.count)
        for round in 0..<rounds {
            for (i, c) in cases.enumerated() {
                progress.update("round \(round + 1)/\(rounds)", "[\(i + 1)/\(cases.count)] \(c.id) \(c.name)")
                timings[i].append(Double(try time(c, bodies[i], batch[i])) / Double(batch[i]))
            }
        }
        return timings
    }

    /// Heap allocations per call, by case id: one batch of up to 10,000 calls per single-thread
    /// case, on the calling thread, after the timed rounds (so caches and spare records are
    /// warm). Empty when counting is not available (a sanitizer build).
    func countAllocations(_ cases: [BenchCase], _ bodies: [BenchCase.Body], progress: Progress) throws -> [String: Double] {
        guard sfb_allocation_counting_available() != 0 else { return [:] }
        var result: [String: Double] = [:]
        for (i, c) in cases.enumerated() where c.threads == 1 {
            progress.update("counting allocations", "[\(i + 1)/\(cases.count)] \(c.id) \(c.name)")
            let n = c.slow ? 1_000 : 10_000
            let before = sfb_thread_allocations()
            Self.sink &+= try bodies[i](n)
            let after = sfb_thread_allocations()
            result[c.id] = Double(after - before) / Double(n)
        }
        return result
    }

    /// Warms the case up and returns the batch size that runs for about one sample.
    private func calibrate(_ c: BenchCase, _ body: BenchCase.Body) throws -> Int {
        var n = 64
        var elapsed = try time(c, body, n)
        while elapsed < sampleNanos / 8, n < 1 << 34 {
            n *= 8
            elapsed = try time(c, body, n)
        }
        return max(1, Int(Double(n) * Double(sampleNanos) / Double(max(elapsed, 1))))
    }

    /// CPU time per thread for `n` calls on each of the case's threads. CPU time, not wall
    /// time: on a shared machine the slices the scheduler gives to other processes would
    /// otherwise land in whichever case was running.
    private func time(_ c: BenchCase, _ body: BenchCase.Body, _ n: Int) throws -> UInt64 {
        let start = Self.cpuNow()
        let checksum = try body(n)
        let end = Self.cpuNow()
        Self.sink &+= checksum
        return (end - start) / UInt64(c.threads)
    }

    /// CPU time used by all of the process's threads.
    static func cpuNow() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
