import BenchFixtures

/// A benchmark run: every case's timings and allocations, and what follows from them. The
/// text, JSON and CSV reports and the chart all read this one value.
struct BenchResults {
    let cases: [BenchCase]
    /// ns/call per case (in `cases` order), one entry per round.
    let timings: [[Double]]
    /// Heap allocations per call, by case id (single-thread cases; empty when not counted).
    let allocations: [String: Double]
    let rounds: Int
    let sampleMilliseconds: Int
    let cpus: Int
    let loadAverage: Double
    /// Bytes per object (cases 11c-11e), measured once after the timed rounds.
    var memory: [MemoryMeasurement] = []

    /// The floor every ratio divides by.
    static let floorID = "1"

    func index(of id: String) -> Int? { cases.firstIndex { $0.id == id } }

    func medianNanos(_ i: Int) -> Double { median(timings[i].sorted()) }

    func fastestNanos(_ i: Int) -> Double { timings[i].min() ?? 0 }

    /// The median over rounds of case `id`'s time over case `base`'s time in the same round.
    func ratio(_ id: String, to base: String = floorID) -> Double? {
        guard let a = index(of: id), let b = index(of: base) else { return nil }
        return median(zip(timings[a], timings[b]).map { $0 / max($1, .leastNonzeroMagnitude) }.sorted())
    }

    /// Every target this run can judge: each case's ratio to the floor and allocations, then
    /// the pairs in `BenchTargets`.
    var verdicts: [TargetVerdict] {
        var list: [TargetVerdict] = []
        for c in cases {
            if let limit = c.target, let value = ratio(c.id) {
                list.append(TargetVerdict(kind: .ratio, label: c.name, caseID: c.id,
                                          base: Self.floorID, value: value, limit: limit))
            }
        }
        for t in BenchTargets.pairs {
            guard let value = ratio(t.id, to: t.base) else { continue }
            list.append(TargetVerdict(kind: .ratio, label: t.label, caseID: t.id, base: t.base, value: value,
                                      limit: t.limit))
        }
        for c in cases {
            if let limit = c.allocationTarget, let value = allocations[c.id] {
                list.append(TargetVerdict(kind: .allocations, label: "allocations per call", caseID: c.id,
                                          base: nil, value: value, limit: limit))
            }
        }
        for m in memory {
            list.append(TargetVerdict(kind: .bytes, label: m.name, caseID: m.id, base: nil, value: m.heapBytes,
                                      limit: m.limit))
        }
        return list
    }

    private func median(_ sorted: [Double]) -> Double {
        let n = sorted.count
        guard n > 0 else { return 0 }
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }
}
