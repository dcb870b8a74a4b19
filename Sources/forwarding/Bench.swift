import ArgumentParser
import DynamicRuntime
import Glibc

/// `forwarding bench`: what each layer of a message send costs, against a direct C call.
///
/// Every case runs `samples` timed batches of about `sample-ms` each after a calibrating
/// warm-up; the table shows the median ns/call and its ratio to the floor (case 1) measured
/// in the same run. Time only: heap allocations per call come from the package-benchmark suite.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure dispatch cost layer by layer: ns/call and ratio to a direct C call.",
        discussion: """
            Build in release mode: swift run -c release forwarding bench
            This command reports time only. Heap allocations per call (mallocCountTotal) come
            from the package-benchmark suite: swift package --package-path Benchmarks benchmark
            """
    )

    @Option(help: "Timed samples per case; the median is reported.")
    var samples = 7

    @Option(name: .customLong("sample-ms"), help: "Approximate length of one sample, in milliseconds.")
    var sampleMilliseconds = 40

    @Option(help: "Run only the cases whose id or name contains this text (the floor always runs).")
    var filter: String?

    func validate() throws {
        guard samples >= 1 else { throw ValidationError("--samples must be at least 1") }
        guard sampleMilliseconds >= 1 else { throw ValidationError("--sample-ms must be at least 1") }
    }

    func run() throws {
        #if DEBUG
        FileHandleStderr.write("warning: debug build; numbers mean little. Use: swift run -c release forwarding bench\n")
        #endif
        let progress = Progress()
        progress.note("setting up fixtures (100,000 methods) …")
        let fixtures = try BenchFixtures()
        var cases = fixtures.cases()
        if let filter {
            cases = cases.filter { $0.id == "1" || $0.id.contains(filter) || $0.name.contains(filter) }
        }

        let runner = BenchRunner(samples: samples, sampleNanos: UInt64(sampleMilliseconds) * 1_000_000)
        var results: [(BenchCase, BenchRunner.Result)] = []
        for (i, c) in cases.enumerated() {
            let label = "[\(i + 1)/\(cases.count)] \(c.id) \(c.name)"
            let result = try runner.measure(c) { done in progress.update(label, "sample \(done)/\(samples)") }
            results.append((c, result))
        }
        progress.finish()
        print(BenchReport(results: results, samples: samples, sampleMilliseconds: sampleMilliseconds).render())
    }
}

/// Times cases: a calibrating warm-up picks the batch size, then `samples` batches are timed.
struct BenchRunner {
    let samples: Int
    let sampleNanos: UInt64

    struct Result {
        /// Median and fastest sample, in ns per call.
        let median: Double
        let min: Double
    }

    /// Keeps every checksum observable, so no loop can be optimized away.
    nonisolated(unsafe) static var sink = 0

    func measure(_ c: BenchCase, progress: (Int) -> Void) throws -> Result {
        progress(0)
        var n = 64
        var elapsed = try time(c, n)
        // Grow the batch until it runs long enough to time, then scale it to one sample.
        while elapsed < sampleNanos / 8, n < 1 << 34 {
            n *= 8
            elapsed = try time(c, n)
        }
        n = max(1, Int(Double(n) * Double(sampleNanos) / Double(max(elapsed, 1))))
        var perCall: [Double] = []
        for s in 0..<samples {
            perCall.append(Double(try time(c, n)) / Double(n))
            progress(s + 1)
        }
        perCall.sort()
        return Result(median: perCall[perCall.count / 2], min: perCall[0])
    }

    private func time(_ c: BenchCase, _ n: Int) throws -> UInt64 {
        let start = Self.now()
        let checksum = try c.body(n)
        let end = Self.now()
        Self.sink &+= checksum
        return end - start
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

/// The table, the placeholders for cases not measured yet, and the targets.
struct BenchReport {
    let results: [(BenchCase, BenchRunner.Result)]
    let samples: Int
    let sampleMilliseconds: Int

    /// Cases whose modules are still being built, shown where they will appear.
    static let pending: [(after: String, id: String, name: String)] = [
        ("3b", "4-6", "hooks: pass-through, drop, capture and replay — pending the hook module"),
        ("7b", "8", "throttled send (MessageThrottle) — pending the rule engine"),
    ]

    func render() -> String {
        guard let floor = results.first(where: { $0.0.id == "1" })?.1.median, floor > 0 else {
            return "no floor measured"
        }
        var load = [0.0, 0.0, 0.0]
        _ = getloadavg(&load, 3)
        var out: [String] = []
        out.append("SelectorForwarding dispatch cost — median of \(samples) samples × ~\(sampleMilliseconds) ms, "
            + "\(sysconf(Int32(_SC_NPROCESSORS_ONLN))) CPUs, load average \(fmt(load[0], 2))")
        let nameWidth = max(44, results.map(\.0.name.count).max() ?? 0)
        out.append(row("case", "what", "ns/call", "min", "× floor", "target", width: nameWidth))
        out.append(String(repeating: "─", count: nameWidth + 44))
        for (c, r) in results {
            let ratio = r.median / floor
            var target = ""
            if let t = c.target { target = "≤ \(fmt(t, 0))× " + (ratio <= t ? "met" : "MISSED") }
            out.append(row(c.id, c.name, fmt(r.median, 2), fmt(r.min, 2), fmt(ratio, 2), target, width: nameWidth))
            for p in Self.pending where p.after == c.id {
                out.append(p.id.padded(5) + " " + p.name)
            }
        }
        out.append("")
        out.append("Targets (ratios within this run):")
        func ratio(_ a: String, _ b: String) -> Double? {
            guard let x = median(a), let y = median(b), y > 0 else { return nil }
            return x / y
        }
        let targets: [(label: String, value: Double?, limit: Double)] = [
            ("sf_msg_lookup + call (2a) / floor", ratio("2a", "1"), 3.0),
            ("typed Swift send (2b) / floor", ratio("2b", "1"), 5.0),
            ("100,000 vs 10 selectors (9c / 9a)", ratio("9c", "9a"), 1.5),
            ("32-deep vs 1-deep hierarchy (9f / 9d)", ratio("9f", "9d"), 1.5),
        ]
        for t in targets {
            guard let value = t.value else { continue }
            let verdict = value <= t.limit ? "met" : "MISSED"
            // Two decimals, or three where two would round a miss onto the limit.
            let shown = fmt(value, 2) == fmt(t.limit, 2) ? fmt(value, 3) : fmt(value, 2)
            out.append("  " + t.label.padded(40) + " " + shown + "×  (≤ " + fmt(t.limit, 1) + "×) " + verdict)
        }
        if let t = ratio("9h", "9g") {
            out.append("  " + "2 threads vs 1, per thread (9h / 9g)".padded(40) + " " + fmt(t, 2)
                + "×  (no target; 1.00× is perfect scaling)")
        }
        out.append("")
        out.append("Time only. Heap allocations per call: swift package --package-path Benchmarks benchmark")
        return out.joined(separator: "\n")
    }

    private func median(_ id: String) -> Double? { results.first { $0.0.id == id }?.1.median }

    private func row(_ id: String, _ name: String, _ ns: String, _ min: String, _ ratio: String,
                     _ target: String, width: Int) -> String {
        let left = id.padded(5) + " " + name.padded(width)
        return left + ns.padded(9, right: true) + min.padded(9, right: true) + ratio.padded(9, right: true) + "  " + target
    }
}

extension String {
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

/// A status line on stderr: redrawn in place on a terminal; elsewhere one line per case, so
/// that logs stay short.
final class Progress {
    private let isTerminal = isatty(2) != 0
    private var lastLabel = ""

    func note(_ text: String) { FileHandleStderr.write(isTerminal ? "\r\u{1B}[K\(text)" : "\(text)\n") }

    func update(_ label: String, _ detail: String) {
        if isTerminal {
            FileHandleStderr.write("\r\u{1B}[K\(label)  \(detail)")
        } else if label != lastLabel {
            lastLabel = label
            FileHandleStderr.write("\(label)\n")
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
