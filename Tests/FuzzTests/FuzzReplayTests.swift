import XCTest
import Foundation
import FuzzTargets

/// Replays the committed fuzz corpus (Tests/FuzzCorpus/<target>) and seeded random inputs
/// through the same targets libFuzzer drives (scripts/fuzz.sh). Every input must give a value
/// or a clear error; inputs that reach a known open bug are skipped and counted (run them with
/// SF_FUZZ_KNOWN_BUGS=1 — they crash). SF_FUZZ_SEEDED sets the number of random inputs per
/// target (default 20000), SF_FUZZ_SEED the seed (default 1).
final class FuzzReplayTests: XCTestCase {
    static let corpusRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("FuzzCorpus").path

    static var seededCount: Int { Int(ProcessInfo.processInfo.environment["SF_FUZZ_SEEDED"] ?? "") ?? 20_000 }
    static var seed: UInt64 { UInt64(ProcessInfo.processInfo.environment["SF_FUZZ_SEED"] ?? "") ?? 1 }

    func testEncodingCorpus() { replayCorpus(.encoding) }
    func testEncodingSeeded() { replaySeeded(.encoding) }
    func testSendCorpus() { replayCorpus(.send) }
    func testSendSeeded() { replaySeeded(.send) }

    /// The minimized crash inputs found by libFuzzer stay in the corpus and keep their outcome.
    func testEncodingCrashInputsAreRejectedCleanly() {
        let nulName: [UInt8] = Array("@@:{".utf8) + [0] + Array("=I}".utf8)
        XCTAssertEqual(FuzzTarget.encoding.run(nulName), .rejected("malformedEncoding"))
    }

    private func corpus(_ target: FuzzTarget) -> [(name: String, bytes: [UInt8])] {
        FuzzCorpus.load(Self.corpusRoot + "/" + target.corpusName)
    }

    private func replayCorpus(_ target: FuzzTarget) {
        let files = corpus(target)
        XCTAssertFalse(files.isEmpty, "no corpus at \(Self.corpusRoot)/\(target.corpusName)")
        var stats = FuzzStats()
        for file in files {
            let result = target.run(file.bytes)
            stats.record(result, input: file.bytes)
            if case let .violation(message) = result { XCTFail("\(file.name): \(message)") }
        }
        print("fuzz-replay: \(target.rawValue) corpus files=\(files.count) \(stats)")
    }

    private func replaySeeded(_ target: FuzzTarget) {
        let inputs = SeededInputs.make(target, seed: Self.seed, count: Self.seededCount, corpus: corpus(target).map(\.bytes))
        var stats = FuzzStats()
        for input in inputs { stats.record(target.run(input), input: input) }
        for v in stats.violations.prefix(20) { XCTFail(v) }
        print("fuzz-replay: \(target.rawValue) seeded seed=\(Self.seed) \(stats)")
    }
}
