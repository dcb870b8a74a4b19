import BenchFixtures
import Glibc

/// The report formats of `forwarding bench`.
enum BenchFormat: String, CaseIterable {
    case text, json, csv
}

/// `forwarding bench`: what each layer of a message send costs, against a direct C call.
///
/// Each case is calibrated to a batch of about `sample-ms`, then the cases are timed in
/// rounds, every case once a round, so that a busy spell on a shared machine slows one round of
/// every case instead of all samples of one case. Reports give the median ns/call and the
/// median over rounds of the ratio to the floor (case 1) timed in the same round. After the
/// rounds, one counted batch per case gives heap allocations per call (this executable links
/// MallocCounter, which counts the calling thread's mallocs). The cases themselves live in the
/// BenchFixtures library, shared with the package-benchmark suite.
struct BenchCommand: Subcommand {
    static let spec = CommandSpec(
        name: "bench",
        abstract: "Measure dispatch cost layer by layer: ns/call and ratio to a direct C call.",
        discussion: """
            Build in release mode: swift run -c release forwarding bench
            Reports CPU time per call, its ratio to a direct C call (the floor, case 1) and heap
            allocations per call, and whether each target is met. Percentiles and baselines:
            swift package --package-path Benchmarks benchmark
            """,
        options: [
            OptionSpec(name: "samples", value: "n",
                       help: "Timing rounds; every case is timed once a round and the median is reported.",
                       defaultValue: "11"),
            OptionSpec(name: "sample-ms", value: "ms", help: "Approximate length of one timed batch, in milliseconds.",
                       defaultValue: "40"),
            OptionSpec(name: "filter", value: "cases",
                       help: "Comma-separated case ids or id prefixes (2a, 9) or parts of names; the floor always runs."),
            OptionSpec(name: "calls", value: "n",
                       help: "Make exactly this many calls per case, once, without warm-up: for profilers."),
            OptionSpec(name: "objects", value: "n",
                       help: "Objects per memory case (11c-11e), instead of the defaults."),
            OptionSpec(name: "format", value: "format", help: "Report format.",
                       choices: BenchFormat.allCases.map(\.rawValue), defaultValue: "text"),
            OptionSpec(name: "output", value: "file", help: "Write the report to this file instead of standard output."),
            OptionSpec(name: "svg", value: "file",
                       help: "Also write a bar chart (SVG, log scale) of every case's ratio to the floor, targets marked."),
            OptionSpec(name: "anchors", value: "file",
                       help: "Mark other systems' figures on the chart: the output of bash Benchmarks/objc/run.sh, or ANCHOR <case> <ratio> <label> lines."),
            OptionSpec(name: "check", help: "Exit with status 1 when a target is missed."),
            OptionSpec(name: "list", help: "List the cases and their targets without measuring."),
        ])

    let samples: Int
    let sampleMilliseconds: Int
    let filter: String?
    let calls: Int?
    let objects: Int?
    let format: BenchFormat
    let output: String?
    let svg: String?
    let anchors: [Anchor]
    let check: Bool
    let list: Bool

    init(_ options: ParsedOptions) throws {
        samples = try options.int("samples", default: 11, minimum: 1, in: Self.spec)
        sampleMilliseconds = try options.int("sample-ms", default: 40, minimum: 1, in: Self.spec)
        calls = options.string("calls") == nil ? nil : try options.int("calls", default: 1, minimum: 1, in: Self.spec)
        filter = options.string("filter")
        objects = options.string("objects") == nil ? nil : try options.int("objects", default: 1, minimum: 1, in: Self.spec)
        format = options.choice("format", default: BenchFormat.text)
        output = options.string("output")
        svg = options.string("svg")
        anchors = try options.string("anchors").map(Anchors.load) ?? []
        check = options.flag("check")
        list = options.flag("list")
        if check, calls != nil {
            throw UsageError(command: Self.spec, message: "'--check' needs timed rounds; it cannot be used with '--calls'")
        }
    }

    func run() throws -> Int32 {
        var cases = BenchCase.all
        var memoryCases = MemoryCases.cases
        if let filter {
            let terms = filter.split(separator: ",").map { String($0).trimmed() }
            func selected(_ id: String, _ name: String) -> Bool {
                terms.contains { t in t.first?.isNumber == true ? id.hasPrefix(t) : name.contains(t) }
            }
            cases = cases.filter { c in c.id == BenchResults.floorID || selected(c.id, c.name) }
            memoryCases = memoryCases.filter { selected($0.id, $0.name) }
        }
        if list {
            for c in cases {
                let targets = [c.target.map { "≤ \(fmt($0, 0))× floor" }, c.allocationTarget.map { "≤ \(fmt($0, 0)) allocs" }]
                print(c.id.padded(5) + c.name.padded(52) + targets.compactMap { $0 }.joined(separator: ", "))
            }
            for m in memoryCases {
                print(m.id.padded(5) + m.name.padded(52) + "≤ \(fmt(m.limit, 0)) B/object at \(grouped(objects ?? m.count)) objects")
            }
            return 0
        }
        #if DEBUG
        FileHandleStderr.write("warning: debug build; numbers mean little. Use: swift run -c release forwarding bench\n")
        #endif
        let progress = Progress()
        progress.note("setting up fixtures (100,000 methods) …")
        let fixtures = try BenchFixtures()
        try fixtures.verify()

        let runner = BenchRunner(rounds: calls == nil ? samples : 1,
                                 sampleNanos: UInt64(sampleMilliseconds) * 1_000_000, fixedCalls: calls)
        let bodies = cases.map { $0.body(for: fixtures) }
        let timings = try runner.run(cases, bodies, progress: progress)
        let allocations = calls == nil ? try runner.countAllocations(cases, bodies, progress: progress) : [:]
        var memory: [MemoryMeasurement] = []
        if calls == nil, !memoryCases.isEmpty {
            progress.update("measuring memory", memoryCases.map(\.id).joined(separator: ", "))
            memory = try MemoryCases.measure(ids: Set(memoryCases.map(\.id)), objects: objects)
        }
        // The windows must still be open, or 5 and 6 measured something else.
        try fixtures.verify()
        progress.finish()

        var load = [0.0, 0.0, 0.0]
        _ = getloadavg(&load, 3)
        let results = BenchResults(cases: cases, timings: timings, allocations: allocations, rounds: runner.rounds,
                                   sampleMilliseconds: sampleMilliseconds,
                                   cpus: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), loadAverage: load[0],
                                   memory: memory)
        let report: String
        switch format {
        case .text: report = BenchTextReport(results: results).render()
        case .json: report = BenchJSONReport(results: results).render()
        case .csv: report = BenchCSVReport(results: results).render()
        }
        if let output {
            try TextFile.write(report + "\n", to: output)
            FileHandleStderr.write("wrote \(output)\n")
        } else {
            print(report)
        }
        if let svg {
            try TextFile.write(BenchChart(results: results, anchors: anchors).render(), to: svg)
            FileHandleStderr.write("wrote \(svg)\n")
        }
        let missed = results.verdicts.filter { !$0.met }
        guard check, !missed.isEmpty else { return 0 }
        for v in missed {
            let base = v.base.map { " / \($0)" } ?? ""
            FileHandleStderr.write("target missed: \(v.caseID)\(base) \(v.label): \(fmt(v.value, 3)) > \(fmt(v.limit, 2))\n")
        }
        return 1
    }
}
