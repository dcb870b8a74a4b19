/// `--format json`: every case with its timings, ratio, allocations and target verdicts, and
/// every target, for keeping results over time.
struct BenchJSONReport {
    let results: BenchResults

    func render() -> String {
        let r = results
        let verdicts = r.verdicts
        var cases: [String] = []
        for (i, c) in r.cases.enumerated() {
            let own = verdicts.filter { $0.caseID == c.id && ($0.base == BenchResults.floorID || $0.kind == .allocations) }
            let fields: [(String, String)] = [
                ("id", json(c.id)),
                ("name", json(c.name)),
                ("threads", String(c.threads)),
                ("nsPerCall", json(r.medianNanos(i))),
                ("fastestNsPerCall", json(r.fastestNanos(i))),
                ("ratioToFloor", json(r.ratio(c.id))),
                ("allocationsPerCall", json(r.allocations[c.id])),
                ("targets", "[" + own.map(object).joined(separator: ", ") + "]"),
                ("samplesNs", "[" + r.timings[i].map { json($0) }.joined(separator: ", ") + "]"),
            ]
            cases.append("    " + object(fields))
        }
        let top: [(String, String)] = [
            ("tool", json("forwarding bench")),
            ("version", json(PackageVersion.current)),
            ("rounds", String(r.rounds)),
            ("sampleMilliseconds", String(r.sampleMilliseconds)),
            ("cpus", String(r.cpus)),
            ("loadAverage", json(r.loadAverage)),
            ("floor", json(BenchResults.floorID)),
            ("allocationsCounted", r.allocations.isEmpty ? "false" : "true"),
            ("allTargetsMet", verdicts.allSatisfy(\.met) ? "true" : "false"),
        ]
        var out = "{\n" + top.map { "  \(json($0.0)): \($0.1)," }.joined(separator: "\n") + "\n"
        out += "  \"cases\": [\n" + cases.joined(separator: ",\n") + "\n  ],\n"
        let memory = r.memory.map { m in
            "    " + object([("id", json(m.id)), ("name", json(m.name)), ("objects", String(m.objects)),
                          ("heapBytesPerObject", json(m.heapBytes)), ("residentBytesPerObject", json(m.residentBytes)),
                          ("limit", json(m.limit)), ("met", m.met ? "true" : "false")])
        }
        out += "  \"memory\": [\n" + memory.joined(separator: ",\n") + "\n  ],\n"
        out += "  \"targets\": [\n" + verdicts.map { "    " + object($0) }.joined(separator: ",\n") + "\n  ]\n}"
        return out
    }

    private func object(_ v: TargetVerdict) -> String {
        object([("kind", json(v.kind.rawValue)), ("label", json(v.label)), ("case", json(v.caseID)),
                ("base", v.base.map(json) ?? "null"), ("value", json(v.value)), ("limit", json(v.limit)),
                ("met", v.met ? "true" : "false")])
    }

    private func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\(json($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }
}

/// `--format csv`: one row per case (RFC 4180 quoting), ratio-to-floor and allocation targets
/// in their own columns.
struct BenchCSVReport {
    let results: BenchResults

    func render() -> String {
        let r = results
        var lines = ["id,name,threads,ns_per_call,fastest_ns_per_call,ratio_to_floor,allocations_per_call,"
            + "target_ratio,target_ratio_met,target_allocations,target_allocations_met"]
        for (i, c) in r.cases.enumerated() {
            let ratio = r.ratio(c.id)
            let allocs = r.allocations[c.id]
            let cells: [String] = [
                csv(c.id), csv(c.name), String(c.threads), number(r.medianNanos(i)), number(r.fastestNanos(i)),
                ratio.map(number) ?? "", allocs.map(number) ?? "",
                c.target.map(number) ?? "", verdict(c.target, ratio),
                c.allocationTarget.map(number) ?? "", verdict(c.allocationTarget, allocs),
            ]
            lines.append(cells.joined(separator: ","))
        }
        return lines.joined(separator: "\n")
    }

    private func verdict(_ limit: Double?, _ value: Double?) -> String {
        guard let limit, let value else { return "" }
        return value <= limit ? "met" : "missed"
    }

    private func csv(_ s: String) -> String {
        s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" })
            ? "\"" + s.replacingAll("\"", with: "\"\"") + "\"" : s
    }
}

/// A JSON string literal.
func json(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        default:
            if scalar.value < 0x20 {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}

/// A JSON number (4 decimals: sub-nanosecond precision is noise here), or null.
func json(_ value: Double?) -> String {
    guard let value, value.isFinite else { return "null" }
    return number(value)
}

/// A plain decimal number with up to 4 decimals, trailing zeros dropped.
func number(_ value: Double) -> String {
    var s = fmt(value, 4)
    while s.contains("."), s.hasSuffix("0") { s.removeLast() }
    if s.hasSuffix(".") { s.removeLast() }
    return s
}

extension String {
    /// Every occurrence of `target` replaced, without Foundation.
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
