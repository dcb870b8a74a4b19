import FuzzTargets
#if canImport(Glibc)
import Glibc
#endif

// The fuzzer driver. Which target runs comes from SF_FUZZ_TARGET (encoding | send).
//
// Built with -DFUZZING (scripts/fuzz.sh): libFuzzer drives the target; a broken invariant
// traps, which libFuzzer records as a crash with its input.
//
// Built without it (an ordinary `swift build`): a deterministic loop over the committed
// corpus and seeded random inputs, printing the counts:
//   SFFuzz [encoding|send|all] [count] [seed] [corpus root]
//   SFFuzz explain encoding|send FILE     (what an input means, and its outcome)

nonisolated(unsafe) var selectedTarget: FuzzTarget = .encoding

func printError(_ s: String) {
    s.withCString { _ = write(2, $0, strlen($0)) }
}

func targetFromEnvironment() -> FuzzTarget {
    let name = getenv("SF_FUZZ_TARGET").map { String(cString: $0) } ?? "encoding"
    guard let t = FuzzTarget(rawValue: name) else {
        printError("SF_FUZZ_TARGET must be one of \(FuzzTarget.allCases.map(\.rawValue)), not '\(name)'\n")
        exit(2)
    }
    return t
}

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

@_cdecl("SFFuzz_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    selectedTarget = targetFromEnvironment()
    printError("SFFuzz: libFuzzer on target '\(selectedTarget.rawValue)'\n")
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        if case let .violation(message) = selectedTarget.run(bytes) {
            printError("SFFuzz: invariant broken: \(message)\n")
            abort()
        }
        return 0
    }
}
#else
@main
enum FuzzMain {
    static func main() {
        let args = CommandLine.arguments
        if args.count == 4, args[1] == "explain", let target = FuzzTarget(rawValue: args[2]) {
            let bytes = FuzzCorpus.readFile(args[3]) ?? []
            print(target.explain(bytes))
            print(target.run(bytes, options: FuzzOptions()))
            exit(0)
        }
        let which = args.count > 1 ? args[1] : (getenv("SF_FUZZ_TARGET").map { String(cString: $0) } ?? "all")
        let count = args.count > 2 ? Int(args[2]) ?? 10_000 : 10_000
        let seed = args.count > 3 ? UInt64(args[3]) ?? 1 : 1
        let root = args.count > 4 ? args[4] : "Tests/FuzzCorpus"
        let targets = which == "all" ? FuzzTarget.allCases : [FuzzTarget(rawValue: which) ?? .encoding]
        var failed = false
        for target in targets {
            let corpus = FuzzCorpus.load(root + "/" + target.corpusName)
            var stats = FuzzStats()
            for file in corpus { stats.record(target.run(file.bytes), input: file.bytes) }
            let corpusStats = stats
            var random = FuzzStats()
            for input in SeededInputs.make(target, seed: seed, count: count, corpus: corpus.map(\.bytes)) {
                random.record(target.run(input), input: input)
            }
            print("SFFuzz \(target.rawValue): corpus \(corpus.count) files: \(corpusStats)")
            print("SFFuzz \(target.rawValue): seeded (seed \(seed)): \(random)")
            for v in corpusStats.violations + random.violations {
                print("SFFuzz \(target.rawValue): VIOLATION \(v)")
                failed = true
            }
        }
        exit(failed ? 1 : 0)
    }
}
#endif
