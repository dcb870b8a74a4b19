/// A reference figure marked on the chart: what another system's counterpart of a case costs,
/// as a ratio to that system's own floor.
struct Anchor {
    let caseID: String
    let ratio: Double
    let label: String
}

/// Reads anchors from a file: the `RESULT <case> <ns>` lines `bash Benchmarks/objc/run.sh`
/// prints (GNUstep; each divided by its `direct` case), and `ANCHOR <case-id> <ratio> <label>`
/// lines for anything else. Blank lines, `#` comments and the script's other output are skipped.
enum Anchors {
    /// The GNUstep cases and the cases of ours they correspond to (Benchmarks/objc/README.md).
    static let gnustepCounterparts: [(name: String, caseID: String)] = [
        ("msgSend", "2b"), ("forwardingTarget", "7c"), ("forwardInvocation", "7d"), ("proxyForward", "7e"),
    ]

    static func load(_ path: String) throws -> [Anchor] {
        try parse(try TextFile.read(path), path: path)
    }

    static func parse(_ text: String, path: String) throws -> [Anchor] {
        var anchors: [Anchor] = []
        var gnustep: [String: Double] = [:]
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard let keyword = fields.first else { continue }
            let bad = { (what: String) in FileError(path: path, action: "read anchors from",
                                                    reason: "line \(n + 1): \(what): '\(line)'") }
            switch keyword {
            case "RESULT":
                guard fields.count == 3, let ns = Double(fields[2]), ns > 0 else {
                    throw bad("expected RESULT <case> <ns per call>")
                }
                gnustep[fields[1]] = ns
            case "ANCHOR":
                guard fields.count >= 4, let ratio = Double(fields[2]), ratio > 0 else {
                    throw bad("expected ANCHOR <case-id> <ratio> <label>")
                }
                anchors.append(Anchor(caseID: fields[1], ratio: ratio, label: fields[3...].joined(separator: " ")))
            default:
                continue
            }
        }
        if !gnustep.isEmpty {
            guard let direct = gnustep["direct"] else {
                throw FileError(path: path, action: "read anchors from",
                                reason: "RESULT lines without 'RESULT direct <ns>', the floor they divide by")
            }
            for (name, id) in gnustepCounterparts {
                if let ns = gnustep[name] { anchors.append(Anchor(caseID: id, ratio: ns / direct, label: "GNUstep \(name)")) }
            }
        }
        return anchors
    }
}
