import BenchFixtures

/// The table `forwarding bench` prints by default (`--format text`).
struct BenchTextReport {
    let results: BenchResults

    func render() -> String {
        let r = results
        var out: [String] = []
        out.append("SelectorForwarding \(PackageVersion.current) dispatch cost: \(r.rounds) rounds × ~\(r.sampleMilliseconds) ms a case, "
            + "\(r.cpus) CPUs, load average \(fmt(r.loadAverage, 2))")
        out.append("ns/call: CPU time per call and thread, median (and fastest) round; "
            + "× floor: median over rounds of case / floor in that round")
        out.append("")
        let nameWidth = max(44, r.cases.map(\.name.count).max() ?? 0)
        out.append(row("case", "what", "ns/call", "fastest", "× floor", "allocs", "target", width: nameWidth))
        out.append(String(repeating: "─", count: nameWidth + 62))
        for (i, c) in r.cases.enumerated() {
            var target: [String] = []
            let ratio = r.ratio(c.id)
            let allocs = r.allocations[c.id]
            if let t = c.target, let ratio { target.append("≤ \(fmt(t, 0))× " + (ratio <= t ? "met" : "MISSED")) }
            if let t = c.allocationTarget, let allocs {
                target.append("\(fmt(t, 0)) allocs " + (allocs <= t ? "met" : "MISSED"))
            }
            out.append(row(c.id, c.name, fmt(r.medianNanos(i), 2), fmt(r.fastestNanos(i), 2),
                           ratio.map { fmt($0, 2) } ?? "", allocs.map { fmt($0, 2) } ?? "—",
                           target.joined(separator: ", "), width: nameWidth))
        }
        out.append("")
        out.append("Targets (within this run):")
        for v in r.verdicts {
            let verdict = v.met ? "met" : "MISSED"
            switch v.kind {
            case .ratio:
                let label = "\(v.caseID) ÷ \(v.base ?? "")".padded(9) + v.label
                // Two decimals, or three where two would round a miss onto the limit.
                let shown = fmt(v.value, 2) == fmt(v.limit, 2) ? fmt(v.value, 3) : fmt(v.value, 2)
                out.append("  " + clipped(label, 52) + " " + shown + "×  (≤ " + fmtLimit(v.limit) + "×) " + verdict)
            case .allocations:
                out.append("  " + clipped(v.caseID.padded(9) + v.label, 52) + " " + fmt(v.value, 2) + "   (≤ "
                    + fmt(v.limit, 0) + ") " + verdict)
            case .bytes:
                out.append("  " + clipped(v.caseID.padded(9) + v.label, 52) + " " + fmt(v.value, 1) + " B  (≤ "
                    + fmt(v.limit, 0) + " B) " + verdict)
            }
        }
        for t in BenchTargets.informational {
            guard let value = r.ratio(t.id, to: t.base) else { continue }
            out.append("  " + clipped("\(t.id) ÷ \(t.base)".padded(9) + t.label, 52) + " " + fmt(value, 2) + "×  (\(t.note))")
        }
        if !r.memory.isEmpty {
            out.append("")
            out.append("Memory (heap: growth of the malloc chunks in use, headers included; resident: of the RSS):")
            for m in r.memory {
                out.append("  " + clipped(m.id.padded(9) + m.name, 52) + grouped(m.objects).padded(8, right: true) + " objects: heap " + fmt(m.heapBytes, 1).padded(8, right: true)
                    + " B/object, resident " + fmt(m.residentBytes, 1).padded(8, right: true) + " B/object")
            }
        }
        out.append("")
        out.append(r.allocations.isEmpty
            ? "allocs: not counted (sanitizer build, or --calls)."
            : "allocs: heap allocations per call on the calling thread (mallocs counted over 1,000 or 10,000 calls; — for threaded cases).")
        out.append("Percentiles and baselines: swift package --package-path Benchmarks benchmark")
        return out.joined(separator: "\n")
    }

    private func clipped(_ s: String, _ width: Int) -> String {
        s.count > width ? String(s.prefix(width - 1)) + "…" : s.padded(width)
    }

    private func row(_ id: String, _ name: String, _ ns: String, _ best: String, _ ratio: String,
                     _ allocs: String, _ target: String, width: Int) -> String {
        let left = id.padded(5) + " " + name.padded(width)
        return left + ns.padded(10, right: true) + best.padded(10, right: true) + ratio.padded(9, right: true)
            + allocs.padded(8, right: true) + "  " + target
    }
}
