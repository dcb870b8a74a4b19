import DynamicRuntime
#if canImport(Glibc)
import Glibc
#endif

/// The fuzz targets: each takes an arbitrary byte string and must come back with a value or a
/// clear error — never a crash, a leak or a broken invariant. Shared by the libFuzzer driver
/// (`SFFuzz`, built with `-DFUZZING`), its seeded-random fallback and the XCTest replay
/// (`FuzzTests`). See docs/reliability.md ("Fuzzing").
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `Signature("…")`: the type-encoding parser and libffi preparation.
    case encoding
    /// Dynamic and typed `send`, and `sf_msg_send`, against a fixed set of classes: argument
    /// counts and types, unknown and reserved selectors, forwarding, hooks.
    case send

    /// Runs one input.
    public func run(_ data: [UInt8], options: FuzzOptions = .fromEnvironment) -> FuzzResult {
        switch self {
        case .encoding: EncodingFuzzer.run(data, options: options)
        case .send: SendFuzzer.run(data, options: options)
        }
    }

    /// What the input means, without running it (for reports and minimized crashes).
    public func explain(_ data: [UInt8]) -> String {
        switch self {
        case .encoding: return "Signature(\(String(decoding: data, as: UTF8.self).debugDescription))"
        case .send: return SendFuzzer.explain(data)
        }
    }

    /// The corpus directory name under `Tests/FuzzCorpus`.
    public var corpusName: String { rawValue }
}

/// What one input did.
public enum FuzzResult: Equatable, Sendable {
    /// A value came back.
    case accepted
    /// A clear error came back (the error case's name, e.g. `malformedEncoding`).
    case rejected(String)
    /// The input reaches a known, open bug (docs/reliability.md, e.g. `KB-2`) and was not run.
    case skippedKnownBug(String)
    /// A broken invariant: a crash-worthy finding. libFuzzer builds trap on it.
    case violation(String)
}

/// Which known bugs a fuzz run lets inputs reach.
public struct FuzzOptions: Sendable {
    /// Known, open bugs (docs/reliability.md) whose inputs are run instead of skipped; they
    /// crash or corrupt memory until fixed. `SF_FUZZ_KNOWN_BUGS=1` runs all of them,
    /// `SF_FUZZ_KNOWN_BUGS=KB-2,KB-5` only those.
    public var knownBugsToRun: Set<String>
    /// Whether every known bug's inputs run.
    public var runsAllKnownBugs: Bool

    /// Options that run the named known bugs (or all of them).
    public init(knownBugsToRun: Set<String> = [], runsAllKnownBugs: Bool = false) {
        self.knownBugsToRun = knownBugsToRun
        self.runsAllKnownBugs = runsAllKnownBugs
    }

    /// Whether inputs reaching `bug` (e.g. `KB-2`) are run.
    public func runs(_ bug: String) -> Bool { runsAllKnownBugs || knownBugsToRun.contains(bug) }

    /// The options `SF_FUZZ_KNOWN_BUGS` asks for (none when unset or `0`).
    public static let fromEnvironment: FuzzOptions = {
        guard let raw = getenv("SF_FUZZ_KNOWN_BUGS").map({ String(cString: $0) }), !raw.isEmpty, raw != "0" else {
            return FuzzOptions()
        }
        if raw == "1" || raw == "all" { return FuzzOptions(runsAllKnownBugs: true) }
        return FuzzOptions(knownBugsToRun: Set(raw.split(separator: ",").map { String($0) }))
    }()
}

/// Counts of results, for the logs.
public struct FuzzStats: CustomStringConvertible, Sendable {
    /// Inputs recorded.
    public var inputs = 0
    /// Inputs the runtime accepted.
    public var accepted = 0
    /// Inputs refused with a clear error, by the error's name.
    public var rejected: [String: Int] = [:]
    /// Inputs not run because they reach a known bug, by the bug's id.
    public var skipped: [String: Int] = [:]
    /// Broken invariants, each with the input (hex) that broke it.
    public var violations: [String] = []

    /// No inputs yet.
    public init() {}

    /// Counts one input's result.
    public mutating func record(_ r: FuzzResult, input: [UInt8]) {
        inputs += 1
        switch r {
        case .accepted: accepted += 1
        case let .rejected(kind): rejected[kind, default: 0] += 1
        case let .skippedKnownBug(bug): skipped[bug, default: 0] += 1
        case let .violation(message): violations.append(message + " — input " + FuzzStats.hex(input))
        }
    }

    /// Inputs refused, all errors together.
    public var rejectedTotal: Int { rejected.values.reduce(0, +) }
    /// Inputs skipped, all bugs together.
    public var skippedTotal: Int { skipped.values.reduce(0, +) }

    /// One log line of the counts.
    public var description: String {
        func list(_ d: [String: Int]) -> String { d.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",") }
        return "inputs=\(inputs) accepted=\(accepted) rejected=\(rejectedTotal) [\(list(rejected))] "
            + "skippedKnownBug=\(skippedTotal)\(skipped.isEmpty ? "" : " [\(list(skipped))]") violations=\(violations.count)"
    }

    /// The first 256 bytes in hex, `…` after them if there are more.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var s = ""
        for b in bytes.prefix(256) { s.append(digits[Int(b >> 4)]); s.append(digits[Int(b & 15)]) }
        return bytes.count > 256 ? s + "…" : s
    }
}

// MARK: - Reading structured choices from bytes

/// Reads choices from the input; an exhausted input reads zeros, so every byte string is a
/// valid program.
struct ByteReader {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position >= bytes.count }

    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func choose(_ n: Int) -> Int { n <= 1 ? 0 : Int(byte()) % n }

    mutating func int64() -> Int64 {
        var v: UInt64 = 0
        for _ in 0..<8 { v = v << 8 | UInt64(byte()) }
        return Int64(bitPattern: v)
    }

    /// A small or a full-range integer, so that both edge values and ordinary ones appear.
    mutating func interestingInt() -> Int64 {
        switch choose(4) {
        case 0: return Int64(Int8(bitPattern: byte()))
        case 1: return [0, 1, -1, .max, .min, Int64(Int32.max), Int64(Int32.min), 255, 256][choose(9)]
        default: return int64()
        }
    }

    mutating func double() -> Double {
        switch choose(4) {
        case 0: return [0, -0.0, 1, -1, .infinity, -.infinity, .nan, .leastNonzeroMagnitude, .greatestFiniteMagnitude][choose(9)]
        default: return Double(bitPattern: UInt64(bitPattern: int64()))
        }
    }

    mutating func rest() -> [UInt8] {
        guard position < bytes.count else { return [] }
        defer { position = bytes.count }
        return Array(bytes[position...])
    }
}

// MARK: - Seeded random inputs

/// SplitMix64: a tiny deterministic generator, so a seed names the same inputs everywhere.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    var state: UInt64
    /// A generator whose sequence `seed` names.
    public init(seed: UInt64) { state = seed }
    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random inputs made from a seed, for the fuzz targets' seeded runs.
public enum SeededInputs {
    /// Pieces of encodings, valid and not, that random strings are assembled from.
    static let encodingTokens: [String] = [
        "v", "c", "C", "s", "S", "i", "I", "l", "L", "q", "Q", "f", "d", "B", "*", "@", "#", ":", "^", "?",
        "{", "}", "=", "\"", "[", "]", "(", ")", "b", "D", "r", "n", "N", "o", "O", "R", "V", "-", "0", "8",
        "16", "24", "@?", "@\"", "@\"Name\"", "{P=dd}", "{P=", "{P}", "{=}", "^?", "^v", "^{P=dd}", "q@:", "v@:",
        "@@:", "{S={T=cq}^v}", "\"x\"", "é", "\u{0}", "\u{FFFD}", " ", "[4i]", "(U=ic)", "b3",
        "[16@]", "[0i]", "[2[3{P=dd}]]", "[x@]", "[16", "[4]", "{A=[2@?]q}", "@?@:@?",
    ]

    /// `count` inputs for `target` from `seed`: mostly built from the target's grammar, some
    /// plain random bytes, some mutations of the corpus.
    public static func make(_ target: FuzzTarget, seed: UInt64, count: Int, corpus: [[UInt8]] = []) -> [[UInt8]] {
        var rng = SeededGenerator(seed: seed)
        var out: [[UInt8]] = []
        out.reserveCapacity(count)
        for _ in 0..<count {
            let kind = Int.random(in: 0..<10, using: &rng)
            if kind == 0 || (kind == 1 && corpus.isEmpty) {
                out.append((0..<Int.random(in: 0...48, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
            } else if kind == 1 {
                out.append(mutate(corpus.randomElement(using: &rng)!, using: &rng))
            } else if target == .encoding {
                var s = ""
                if Bool.random(using: &rng) { s = ["q@:", "v@:", "@@:", "d#:", "B@:"].randomElement(using: &rng)! }
                for _ in 0..<Int.random(in: 0...12, using: &rng) { s += encodingTokens.randomElement(using: &rng)! }
                out.append(Array(s.utf8))
            } else {
                // Send programs: short, with small bytes for choices and some wide values.
                let n = Int.random(in: 0...40, using: &rng)
                out.append((0..<n).map { i in i < 8 ? UInt8.random(in: 0...31, using: &rng) : UInt8.random(in: 0...255, using: &rng) })
            }
        }
        return out
    }

    static func mutate(_ input: [UInt8], using rng: inout SeededGenerator) -> [UInt8] {
        var b = input
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0 where !b.isEmpty: b[Int.random(in: 0..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            case 1: b.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...b.count, using: &rng))
            case 2 where !b.isEmpty: b.remove(at: Int.random(in: 0..<b.count, using: &rng))
            default: b.append(contentsOf: b.prefix(Int.random(in: 0...4, using: &rng)))
            }
        }
        return b
    }
}

// MARK: - Corpus files

/// Reading a corpus directory of fuzz inputs.
public enum FuzzCorpus {
    /// The files of a corpus directory, sorted by name, as (name, bytes).
    public static func load(_ directory: String) -> [(name: String, bytes: [UInt8])] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name.hasPrefix(".") { continue }
            names.append(name)
        }
        return names.sorted().compactMap { name in
            readFile(directory + "/" + name).map { (name, $0) }
        }
    }

    /// The bytes of the file at `path`, or nil if it cannot be read.
    public static func readFile(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n <= 0 { break }
            out.append(contentsOf: buffer[0..<n])
        }
        return out
    }
}
