import ArgumentParser
import BenchFixtures
import DynamicRuntime
import Glibc
import MallocCounter

/// `forwarding bench`: what each layer of a message send costs, against a direct C call.
///
/// Each case is calibrated to a batch of about `sample-ms`, then the cases are timed in
/// rounds, every case once a round, so that a busy spell on a shared machine slows one round of
/// every case instead of all samples of one case. The table shows the median ns/call and the
/// median over rounds of the ratio to the floor (case 1) timed in the same round. After the
/// rounds, one counted batch per case gives heap allocations per call (this executable links
/// MallocCounter, which counts the calling thread's mallocs). The cases themselves live in the
/// BenchFixtures library, shared with the package-benchmark suite.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure dispatch cost layer by layer: ns/call and ratio to a direct C call.",
        discussion: """
            Build in release mode: swift run -c release forwarding bench
            Reports CPU time per call, its ratio to a direct C call, and heap allocations per
            call. Percentiles and baselines: swift package --package-path Benchmarks benchmark
            """
    )

    @Option(help: "Timing rounds; every case is timed once a round and the median is reported.")
    var samples = 11

    @Option(name: .customLong("sample-ms"), help: "Approximate length of one timed batch, in milliseconds.")
    var sampleMilliseconds = 40

    @Option(help: "Comma-separated case ids or id prefixes (2a, 9) or parts of names; the floor always runs.")
    var filter: String?

    @Option(help: "Make exactly this many calls per case, once, without warm-up: for profilers (the difference between two counts cancels the set-up).")
    var calls: Int?

    func validate() throws {
        guard samples >= 1 else { throw ValidationError("--samples must be at least 1") }
        guard sampleMilliseconds >= 1 else { throw ValidationError("--sample-ms must be at least 1") }
        if let calls, calls < 1 { throw ValidationError("--calls must be at least 1") }
    }

    func run() throws {
        #if DEBUG
        FileHandleStderr.write("warning: debug build; numbers mean little. Use: swift run -c release forwarding bench\n")
        #endif
        let progress = Progress()
        progress.note("setting up fixtures (100,000 methods) …")
        let fixtures = try BenchFixtures()
        try fixtures.verify()
        var cases = BenchCase.all
        if let filter {
            let terms = filter.split(separator: ",").map { String($0).trimmed() }
            cases = cases.filter { c in
                c.id == "1" || terms.contains { t in
                    t.first?.isNumber == true ? c.id.hasPrefix(t) : c.name.contains(t)
                }
            }
        }

        let runner = BenchRunner(rounds: calls == nil ? samples : 1,
                                 sampleNanos: UInt64(sampleMilliseconds) * 1_000_000, fixedCalls: calls)
        let bodies = cases.map { $0.body(for: fixtures) }
        let timings = try runner.run(cases, bodies, progress: progress)
        let allocations = calls == nil ? try runner.countAllocations(cases, bodies, progress: progress) : [:]
        // The windows must still be open, or 5 and 6 measured something else.
        try fixtures.verify()
        progress.finish()
        print(BenchReport(cases: cases, timings: timings, allocations: allocations, rounds: runner.rounds,
                          sampleMilliseconds: sampleMilliseconds).render())
    }
}

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

/// The table and the targets.
struct BenchReport {
    let cases: [BenchCase]
    /// ns/call per case, one entry per round.
    let timings: [[Double]]
    /// Heap allocations per call, by case id (single-thread cases).
    let allocations: [String: Double]
    let rounds: Int
    let sampleMilliseconds: Int

    /// The targets from the issue: a case (or a scaling pair) and the ratio it must stay under.
    static let targets: [(label: String, id: String, base: String, limit: Double)] = [
        ("sf_msg_lookup + call (2a) / floor", "2a", "1", 3.0),
        ("typed Swift send (2b) / floor", "2b", "1", 5.0),
        ("closure IMP, lookup + call (3a) / floor", "3a", "1", 3.0),
        ("typed send, closure IMP (3b) / floor", "3b", "1", 4.0),
        ("instead-hook, proceeds (4a) / floor", "4a", "1", 8.0),
        ("the same over a closure (4c) / floor", "4c", "1", 8.0),
        ("pass-through rule (4b) / floor", "4b", "1", 15.0),
        ("dropped throttled call (5) / floor", "5", "1", 10.0),
        ("captured, last (6a) / floor", "6a", "1", 30.0),
        ("captured, debounce (6b) / floor", "6b", "1", 30.0),
        ("forwardingTarget (7c) / floor", "7c", "1", 60.0),
        ("forwardInvocation (7d) / floor", "7d", "1", 150.0),
        ("Proxy (7e) / floor", "7e", "1", 200.0),
        ("100,000 vs 10 selectors (9c / 9a)", "9c", "9a", 1.5),
        ("32-deep vs 1-deep hierarchy (9f / 9d)", "9f", "9d", 1.5),
    ]

    func render() -> String {
        var load = [0.0, 0.0, 0.0]
        _ = getloadavg(&load, 3)
        var out: [String] = []
        out.append("SelectorForwarding dispatch cost: \(rounds) rounds × ~\(sampleMilliseconds) ms a case, "
            + "\(sysconf(Int32(_SC_NPROCESSORS_ONLN))) CPUs, load average \(fmt(load[0], 2))")
        out.append("ns/call: CPU time per call and thread, median (and fastest) round; "
            + "× floor: median over rounds of case / floor in that round")
        out.append("")
        let nameWidth = max(44, cases.map(\.name.count).max() ?? 0)
        out.append(row("case", "what", "ns/call", "fastest", "× floor", "allocs", "target", width: nameWidth))
        out.append(String(repeating: "─", count: nameWidth + 62))
        for (i, c) in cases.enumerated() {
            let sorted = timings[i].sorted()
            var target: [String] = []
            let r = ratio(c.id, "1")
            let allocs = allocations[c.id]
            if let t = c.target, let r { target.append("≤ \(fmt(t, 0))× " + (r <= t ? "met" : "MISSED")) }
            if let t = c.allocationTarget, let allocs {
                target.append("\(fmt(t, 0)) allocs " + (allocs <= t ? "met" : "MISSED"))
            }
            out.append(row(c.id, c.name, fmt(median(sorted), 2), fmt(sorted[0], 2), r.map { fmt($0, 2) } ?? "",
                           allocs.map { fmt($0, 2) } ?? "—", target.joined(separator: ", "), width: nameWidth))
        }
        out.append("")
        out.append("Targets (ratios within this run):")
        for t in Self.targets {
            guard let value = ratio(t.id, t.base) else { continue }
            let verdict = value <= t.limit ? "met" : "MISSED"
            // Two decimals, or three where two would round a miss onto the limit.
            let shown = fmt(value, 2) == fmt(t.limit, 2) ? fmt(value, 3) : fmt(value, 2)
            out.append("  " + t.label.padded(40) + " " + shown + "×  (≤ " + fmt(t.limit, 1) + "×) " + verdict)
        }
        for c in cases {
            guard let limit = c.allocationTarget, let value = allocations[c.id] else { continue }
            out.append("  " + "allocations per call (\(c.id))".padded(40) + " " + fmt(value, 2) + "   (≤ "
                + fmt(limit, 0) + ") " + (value <= limit ? "met" : "MISSED"))
        }
        if let t = ratio("9h", "9g") {
            out.append("  " + "2 threads vs 1, per thread (9h / 9g)".padded(40) + " " + fmt(t, 2)
                + "×  (no target; 1.00× is perfect scaling)")
        }
        out.append("")
        out.append(allocations.isEmpty
            ? "allocs: not counted (sanitizer build, or --calls)."
            : "allocs: heap allocations per call on the calling thread (mallocs counted over 1,000 or 10,000 calls; — for threaded cases).")
        out.append("Percentiles and baselines: swift package --package-path Benchmarks benchmark")
        return out.joined(separator: "\n")
    }

    /// The median over rounds of case `id`'s time over case `base`'s time in the same round.
    private func ratio(_ id: String, _ base: String) -> Double? {
        guard let a = cases.firstIndex(where: { $0.id == id }),
              let b = cases.firstIndex(where: { $0.id == base }) else { return nil }
        return median(zip(timings[a], timings[b]).map { $0 / max($1, .leastNonzeroMagnitude) }.sorted())
    }

    private func median(_ sorted: [Double]) -> Double {
        let n = sorted.count
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }

    private func row(_ id: String, _ name: String, _ ns: String, _ best: String, _ ratio: String,
                     _ allocs: String, _ target: String, width: Int) -> String {
        let left = id.padded(5) + " " + name.padded(width)
        return left + ns.padded(10, right: true) + best.padded(10, right: true) + ratio.padded(9, right: true)
            + allocs.padded(8, right: true) + "  " + target
    }
}

extension String {
    /// Without leading and trailing spaces.
    func trimmed() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }

    /// Pads with spaces to `width` characters, on the right (or on the left, `right: true`).
    func padded(_ width: Int, right: Bool = false) -> String {
        guard count < width else { return self }
        let fill = String(repeating: " ", count: width - count)
        return right ? fill + self : self + fill
    }
}

/// Formats with a fixed number of decimals, without Foundation.
func fmt(_ value: Double, _ decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var s = String(Int(rounded))
    if decimals > 0 {
        let frac = Int(((abs(rounded) - Double(Int(abs(rounded)))) * scale).rounded())
        let digits = String(frac)
        s += "." + String(repeating: "0", count: decimals - digits.count) + digits
        if rounded < 0, Int(rounded) == 0 { s = "-" + s }
    }
    return s
}

/// A status line on stderr: redrawn in place on a terminal; elsewhere one line per stage
/// (calibration, each round), so that logs stay short.
final class Progress {
    private let isTerminal = isatty(2) != 0
    private var lastStage = ""

    func note(_ text: String) { FileHandleStderr.write(isTerminal ? "\r\u{1B}[K\(text)" : "\(text)\n") }

    func update(_ stage: String, _ detail: String) {
        if isTerminal {
            FileHandleStderr.write("\r\u{1B}[K\(stage) \(detail)")
        } else if stage != lastStage {
            lastStage = stage
            FileHandleStderr.write("\(stage) …\n")
        }
    }

    func finish() { if isTerminal { FileHandleStderr.write("\r\u{1B}[K") } }
}

/// Unbuffered writes to standard error.
enum FileHandleStderr {
    static func write(_ s: String) {
        var s = s
        s.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
