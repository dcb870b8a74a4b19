import BenchFixtures
import Glibc

/// `--svg FILE`: every case as a ratio to the floor, one horizontal bar each, on a log scale,
/// with each case's target (green when met, red when missed) and the anchors (other systems'
/// figures for the same operation) marked. Plain SVG 1.1, drawn here: no plotting dependency.
struct BenchChart {
    let results: BenchResults
    let anchors: [Anchor]

    private let width = 1200.0
    private let labelWidth = 400.0
    private let valueWidth = 230.0
    private let rowHeight = 28.0
    private let top = 96.0

    func render() -> String {
        let r = results
        let ratios = r.cases.map { r.ratio($0.id) ?? 1 }
        let marks = r.cases.compactMap(\.target) + anchors.map(\.ratio) + ratios
        let low = niceFloor(max(min(marks.min() ?? 1, 1) * 0.8, 1e-3))
        let high = pow(10, ceil(log10(max(marks.max() ?? 10, 2) * 1.25)))
        let plotLeft = labelWidth + 10, plotRight = width - valueWidth
        let x = { (v: Double) in plotLeft + (log10(max(v, low)) - log10(low)) / (log10(high) - log10(low)) * (plotRight - plotLeft) }
        let plotBottom = top + Double(r.cases.count) * rowHeight
        let pairs = r.verdicts.filter { $0.kind == .ratio && $0.base != BenchResults.floorID }
        let height = plotBottom + 70 + Double(pairs.count) * 16

        var s: [String] = []
        s.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(width))\" height=\"\(n(height))\" "
            + "viewBox=\"0 0 \(n(width)) \(n(height))\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">")
        s.append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>")
        s.append(text(12, 22, "SelectorForwarding \(PackageVersion.current): cost per call as a ratio to a direct C call (log scale)",
                      size: 16, weight: "bold"))
        s.append(text(12, 42, "median over \(r.rounds) rounds of case ÷ floor (case 1) in the same round; \(r.cpus) CPUs, "
            + "load average \(fmt(r.loadAverage, 2)). Right: × floor, median ns/call, heap allocations/call (green/red: a target).", size: 11, fill: "#444"))
        s.append(legend(y: 62))
        for (label, right) in [("× floor", 70.0), ("ns/call", 150), ("allocs", 215)] {
            s.append(text(plotRight + right, top - 8, label, anchor: "end", size: 11, fill: "#444", weight: "bold"))
        }

        // Decade grid lines (with 2× and 5× in light grey) and their labels, from the decade
        // at or below `low`; lines left of the axis are skipped.
        var decade = pow(10, floor(log10(low) + 1e-9))
        while decade <= high * 1.0001 {
            for (m, colour) in [(1.0, "#bbbbbb"), (2.0, "#eeeeee"), (5.0, "#eeeeee")]
            where decade * m >= low * 0.9999 && decade * m <= high * 1.0001 {
                let gx = x(decade * m)
                s.append("<line x1=\"\(n(gx))\" y1=\"\(n(top - 4))\" x2=\"\(n(gx))\" y2=\"\(n(plotBottom))\" stroke=\"\(colour)\"/>")
                if m == 1 || decade * m == low {
                    s.append(text(gx, plotBottom + 16, axisLabel(decade * m), anchor: "middle", size: 11, fill: "#444"))
                }
            }
            decade *= 10
        }
        s.append(text((plotLeft + plotRight) / 2, plotBottom + 34, "× direct C call (floor = 1)", anchor: "middle", size: 11, fill: "#444"))

        for (i, c) in r.cases.enumerated() {
            let y = top + Double(i) * rowHeight
            let ratio = ratios[i]
            if i % 2 == 1 {
                s.append("<rect x=\"0\" y=\"\(n(y))\" width=\"\(n(width))\" height=\"\(n(rowHeight))\" fill=\"#f6f6f6\" fill-opacity=\"0.6\"/>")
            }
            s.append(text(12, y + 19, c.id, weight: "bold"))
            s.append(text(48, y + 19, clipped(c.name, 54)))
            let barEnd = x(ratio)
            s.append("<rect x=\"\(n(plotLeft))\" y=\"\(n(y + 9))\" width=\"\(n(max(barEnd - plotLeft, 1)))\" height=\"\(n(rowHeight - 13))\" "
                + "fill=\"\(colour(for: c.id))\"><title>\(escape(c.id + " " + c.name)): \(fmt(ratio, 2))×</title></rect>")
            s.append(text(plotRight + 70, y + 19, "\(fmtSignificant(ratio))×", anchor: "end", size: 11))
            s.append(text(plotRight + 150, y + 19, "\(fmtSignificant(r.medianNanos(i)))", anchor: "end", size: 11))
            let allocs = r.allocations[c.id]
            let allocsMet = c.allocationTarget.flatMap { limit in allocs.map { $0 <= limit } }
            s.append(text(plotRight + 215, y + 19, allocs.map { number(($0 * 100).rounded() / 100) } ?? "—", anchor: "end",
                          size: 11, fill: allocsMet.map { $0 ? "#1a7f37" : "#cf222e" } ?? "#1f2328",
                          weight: allocsMet == nil ? "normal" : "bold"))
            if let target = c.target {
                let met = ratio <= target
                let tx = x(target)
                s.append("<line x1=\"\(n(tx))\" y1=\"\(n(y + 1))\" x2=\"\(n(tx))\" y2=\"\(n(y + rowHeight - 1))\" "
                    + "stroke=\"\(met ? "#1a7f37" : "#cf222e")\" stroke-width=\"3\"/>")
                s.append(text(tx + 4, y + 8, "≤\(fmt(target, 0))× " + (met ? "met" : "MISSED"), size: 9,
                              fill: met ? "#1a7f37" : "#cf222e", weight: "bold", halo: true))
            }
            for a in anchors where a.caseID == c.id {
                let ax = x(a.ratio), cy = y + 16
                s.append("<path d=\"M \(n(ax)) \(n(cy - 7)) L \(n(ax + 7)) \(n(cy)) L \(n(ax)) \(n(cy + 7)) L \(n(ax - 7)) \(n(cy)) Z\" "
                    + "fill=\"#8250df\" stroke=\"#ffffff\"><title>\(escape(a.label)): \(fmt(a.ratio, 1))×</title></path>")
                let label = "\(a.label) \(fmtSignificant(a.ratio))×"
                let rightSide = ax + 10 + 6 * Double(label.count) < plotRight
                s.append(text(rightSide ? ax + 10 : ax - 10, y + 20, label,
                              anchor: rightSide ? "start" : "end", size: 10, fill: "#8250df", weight: "bold", halo: true))
            }
        }
        s.append("<line x1=\"\(n(plotLeft))\" y1=\"\(n(top - 4))\" x2=\"\(n(plotLeft))\" y2=\"\(n(plotBottom))\" stroke=\"#333\"/>")

        var y = plotBottom + 58
        for v in pairs {
            s.append(text(12, y, "\(v.caseID) ÷ \(v.base ?? ""), \(v.label): \(fmt(v.value, 2))× (target ≤ \(fmtLimit(v.limit))×) "
                + (v.met ? "met" : "MISSED"), size: 11, fill: v.met ? "#1a7f37" : "#cf222e"))
            y += 16
        }
        s.append("</svg>")
        return s.joined(separator: "\n") + "\n"
    }

    private func legend(y: Double) -> String {
        var parts: [String] = []
        parts.append("<line x1=\"12\" y1=\"\(n(y - 9))\" x2=\"12\" y2=\"\(n(y + 3))\" stroke=\"#1a7f37\" stroke-width=\"3\"/>")
        parts.append(text(18, y, "target, met", size: 11))
        parts.append("<line x1=\"100\" y1=\"\(n(y - 9))\" x2=\"100\" y2=\"\(n(y + 3))\" stroke=\"#cf222e\" stroke-width=\"3\"/>")
        parts.append(text(106, y, "target, missed", size: 11))
        parts.append("<path d=\"M 212 \(n(y - 10)) L 218 \(n(y - 4)) L 212 \(n(y + 2)) L 206 \(n(y - 4)) Z\" fill=\"#8250df\"/>")
        parts.append(text(224, y, anchors.isEmpty ? "anchors: none given (--anchors FILE)"
                          : "anchor: another system's figure for the same operation, × its own direct call", size: 11))
        return parts.joined(separator: "\n")
    }

    /// The largest 1, 2 or 5 × 10ⁿ at or below `v`: the axis starts there.
    private func niceFloor(_ v: Double) -> Double {
        let decade = pow(10, floor(log10(v)))
        return [5.0, 2, 1].map { $0 * decade }.first { $0 <= v } ?? decade
    }

    /// One colour per group of cases (the id's number).
    private func colour(for id: String) -> String {
        // No green, red or purple: those mark targets and anchors.
        let palette = ["#0a3069", "#6e7781", "#0969da", "#54aeff", "#1b7c83", "#bc4c00", "#d4a72c", "#7d4e00",
                       "#57606a", "#218bff"]
        let group = Int(String(id.prefix { $0.isNumber })) ?? 0
        return palette[group % palette.count]
    }

    private func axisLabel(_ v: Double) -> String {
        v >= 1 ? grouped(Int(v.rounded())) + "×" : number(v) + "×"
    }

    private func clipped(_ s: String, _ count: Int) -> String {
        s.count > count ? String(s.prefix(count - 1)) + "…" : s
    }

    private func text(_ x: Double, _ y: Double, _ content: String, anchor: String = "start", size: Int = 12,
                      fill: String = "#1f2328", weight: String = "normal", halo: Bool = false) -> String {
        // A halo keeps a label legible where it crosses a bar.
        "<text x=\"\(n(x))\" y=\"\(n(y))\" text-anchor=\"\(anchor)\" font-size=\"\(size)\" fill=\"\(fill)\""
            + (weight == "normal" ? "" : " font-weight=\"\(weight)\"")
            + (halo ? " stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\"" : "") + ">\(escape(content))</text>"
    }

    private func escape(_ s: String) -> String {
        s.replacingAll("&", with: "&amp;").replacingAll("<", with: "&lt;").replacingAll(">", with: "&gt;")
            .replacingAll("\"", with: "&quot;")
    }

    private func n(_ v: Double) -> String { fmt(v, 1) }
}
