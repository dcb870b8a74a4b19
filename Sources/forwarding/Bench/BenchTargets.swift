/// Targets that compare two cases other than through the floor (a case's own ratio-to-floor
/// and allocation targets are `BenchCase.target` and `BenchCase.allocationTarget`). Add a row
/// here for a new pair.
enum BenchTargets {
    static let pairs: [(label: String, id: String, base: String, limit: Double)] = [
        ("100,000 vs 10 selectors", "9c", "9a", 1.5),
        ("32-deep vs 1-deep hierarchy", "9f", "9d", 1.5),
        ("hook on one object vs on its class", "11b", "4a", 1.15),
        ("hook from C vs from Swift", "4f", "4a", 1.1),
        ("small object vs allocated: lookup + call", "13a", "2a", 1.1),
        ("small object vs allocated: typed send", "13b", "2b", 1.1),
    ]

    /// Reported with the targets but held to none.
    static let informational: [(label: String, id: String, base: String, note: String)] = [
        ("2 threads vs 1, per thread", "9h", "9g", "no target; 1.00× is perfect scaling"),
        ("2 threads vs 1, nothing shared", "9j", "9i", "no target; the machine's own cost of a second thread"),
        ("perform request vs RunLoop.perform(inModes:)", "10a", "10c", "no target; both include a loop pass"),
        ("selector timer vs Foundation block Timer", "10b", "10d", "no target; both include a loop pass"),
        // The libffi closure (forced fallback) against the trampoline slot it was replaced by.
        ("libffi closure vs slot: lookup + call", "3d", "3a", "no target; what the slot buys"),
        ("libffi closure vs slot: typed send", "3e", "3b", "no target; what the slot buys"),
        ("libffi closure vs slot: through a pointer", "3f", "3c", "no target; what the slot buys"),
        ("libffi closure + ffi_call vs hook entry", "4d", "4a", "no target; what the entry buys"),
    ]
}

/// A target and whether this run met it.
struct TargetVerdict {
    enum Kind: String {
        /// A case's median ratio to another case (usually the floor), at most `limit`.
        case ratio
        /// Heap allocations per call, at most `limit`.
        case allocations
        /// Heap bytes per object at scale (cases 11c-11e), at most `limit`.
        case bytes
    }

    let kind: Kind
    let label: String
    let caseID: String
    /// The case the ratio divides by (`ratio` only).
    let base: String?
    let value: Double
    let limit: Double
    var met: Bool { value <= limit }
}
