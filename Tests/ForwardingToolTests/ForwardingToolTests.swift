import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

/// The `forwarding` command-line tool, run as a user runs it: the executable SwiftPM built
/// next to this test bundle. The benchmark runs are tiny (one round of 1 ms batches); they
/// check what the reports contain, not the figures.
final class ForwardingToolTests: XCTestCase {
    func testVersionIsTheChangelogsNewestVersion() throws {
        let run = try forwarding(["--version"])
        XCTAssertEqual(run.status, 0)
        let version = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertNotNil(version.range(of: #"^[0-9]+\.[0-9]+\.[0-9]+$"#, options: .regularExpression), version)
        let changelog = try String(contentsOf: repositoryRoot.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let newest = changelog.split(separator: "\n").first { $0.hasPrefix("## [") && !$0.hasPrefix("## [Unreleased]") }
        XCTAssertEqual(newest.map { String($0.dropFirst(4).prefix { $0 != "]" }) }, version)
    }

    func testBenchJSONHasEveryCaseWithRatioAllocationsAndVerdicts() throws {
        let listed = try forwarding(["bench", "--list"]).stdout.split(separator: "\n").map { String($0.prefix { $0 != " " }) }
        XCTAssertGreaterThan(listed.count, 20)
        let run = try forwarding(["bench", "--samples", "1", "--sample-ms", "1", "--objects", "300", "--format", "json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let cases = try XCTUnwrap(json["cases"] as? [[String: Any]])
        let memory = try XCTUnwrap(json["memory"] as? [[String: Any]])
        XCTAssertEqual(cases.compactMap { $0["id"] as? String } + memory.compactMap { $0["id"] as? String }, listed)
        XCTAssertEqual(memory.map { $0["objects"] as? Int }, [300, 300, 300])
        for m in memory {
            XCTAssertNotNil(m["heapBytesPerObject"] as? Double, "\(m)")
            XCTAssertEqual(m["met"] as? Bool, (m["heapBytesPerObject"] as? Double ?? .infinity) <= (m["limit"] as? Double ?? 0))
        }
        // A sanitizer build cannot count allocations (its allocator is the sanitizer's).
        let counted = try XCTUnwrap(json["allocationsCounted"] as? Bool)
        for c in cases {
            let id = c["id"] as? String ?? "?"
            XCTAssertNotNil(c["ratioToFloor"] as? Double, id)
            XCTAssertGreaterThan(c["nsPerCall"] as? Double ?? 0, 0, id)
            // Counted for single-thread cases; null for the threaded one and when not counted.
            let allocations = c["allocationsPerCall"]
            if counted, c["threads"] as? Int == 1 {
                XCTAssertNotNil(allocations as? Double, id)
            } else {
                XCTAssertTrue(allocations is NSNull, "\(id): \(String(describing: allocations))")
            }
            XCTAssertNotNil(c["targets"] as? [[String: Any]], id)
        }
        XCTAssertEqual((cases.first?["ratioToFloor"] as? Double), 1)
        let targets = try XCTUnwrap(json["targets"] as? [[String: Any]])
        XCTAssertTrue(targets.contains { $0["case"] as? String == "9c" && $0["base"] as? String == "9a" })
        XCTAssertEqual(targets.contains { $0["case"] as? String == "5" && $0["kind"] as? String == "allocations" }, counted)
        for t in targets {
            let value = try XCTUnwrap(t["value"] as? Double), limit = try XCTUnwrap(t["limit"] as? Double)
            XCTAssertEqual(t["met"] as? Bool, value <= limit, "\(t)")
        }
        XCTAssertEqual(json["allTargetsMet"] as? Bool, targets.allSatisfy { $0["met"] as? Bool == true })
    }

    func testCheckFailsOnlyWhenATargetIsMissed() throws {
        // 2b's target (5× the floor) is out of reach in a debug or sanitizer build.
        let missed = try forwarding(["bench", "--samples", "1", "--sample-ms", "1", "--filter", "2b", "--check"])
        XCTAssertEqual(missed.status, 1)
        XCTAssertTrue(missed.stderr.contains("target missed: 2b"), missed.stderr)
        // 1c has no target: nothing can be missed.
        let none = try forwarding(["bench", "--samples", "1", "--sample-ms", "1", "--filter", "1c", "--check"])
        XCTAssertEqual(none.status, 0, none.stderr)
    }

    func testCSVHasAHeaderAndOneRowPerCase() throws {
        let path = scratchFile("bench.csv")
        let run = try forwarding(["bench", "--samples", "1", "--sample-ms", "1", "--filter", "2,7c", "--format", "csv",
                                  "--output", path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, "")
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.first?.hasPrefix("id,name,threads,ns_per_call"), true)
        XCTAssertEqual(lines.dropFirst().map { String($0.prefix { $0 != "," }) }, ["1", "2a", "2b", "2c", "2d", "7c"])
        // "typed send, C-function IMP" is quoted, so every row still has 11 fields.
        XCTAssertTrue(lines.contains { $0.hasPrefix("2b,\"typed send, C-function IMP\",") })
    }

    func testSVGChartIsWellFormedWithBarsTargetsAndAnchors() throws {
        let anchors = scratchFile("anchors.txt")
        try "RESULT direct 2.0\nRESULT msgSend 6.0\nANCHOR 2c 100 a reference\n".write(toFile: anchors, atomically: true, encoding: .utf8)
        let svg = scratchFile("chart.svg")
        let run = try forwarding(["bench", "--samples", "1", "--sample-ms", "1", "--filter", "2", "--svg", svg,
                                  "--anchors", anchors])
        XCTAssertEqual(run.status, 0, run.stderr)
        let data = try Data(contentsOf: URL(fileURLWithPath: svg))
        XCTAssertTrue(XMLParser(data: data).parse(), "not well-formed XML")
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        for id in ["1", "2a", "2b", "2c"] { XCTAssertTrue(text.contains("<title>\(id) "), "no bar for \(id)") }
        XCTAssertTrue(text.contains("≤5×"), "2b's target is not marked")
        XCTAssertTrue(text.contains("GNUstep msgSend 3.00×"), "the RESULT anchor is not marked as msgSend ÷ direct")
        XCTAssertTrue(text.contains("a reference 100×"), "the ANCHOR line is not marked")
    }

    func testBadArgumentsAreUsageErrorsNamingWhatWasWrong() throws {
        let unknown = try forwarding(["bench", "--fast"])
        XCTAssertEqual(unknown.status, 64)
        XCTAssertTrue(unknown.stderr.contains("unknown option '--fast'"), unknown.stderr)
        let format = try forwarding(["bench", "--format", "xml"])
        XCTAssertEqual(format.status, 64)
        XCTAssertTrue(format.stderr.contains("text, json, csv"), format.stderr)
        let part = try forwarding(["demo", "--part", "everything"])
        XCTAssertEqual(part.status, 64)
        XCTAssertTrue(part.stderr.contains("all, runtime, lifecycle, forwarding, hooks, throttle"), part.stderr)
        let anchors = try forwarding(["bench", "--anchors", scratchFile("missing.txt")])
        XCTAssertEqual(anchors.status, 1)
        XCTAssertTrue(anchors.stderr.contains("cannot read"), anchors.stderr)
    }

    func testHelpLinesAreOptionsOrProse() throws {
        for command in [["--help"], ["bench", "--help"], ["demo", "--help"], ["help", "bench"]] {
            let run = try forwarding(command)
            XCTAssertEqual(run.status, 0)
            XCTAssertTrue(run.stdout.contains("USAGE: forwarding"), "\(command)")
            for line in run.stdout.split(separator: "\n") {
                let words = line.split(separator: " ")
                // A lone word is a stray fragment unless it is a section heading or an option.
                XCTAssertFalse(words.count == 1 && !line.hasSuffix(":") && !line.contains("--"),
                               "stray line '\(line)' in \(command)")
            }
        }
    }

    /// +initialize runs superclass first, then the superclass's again for a subclass without its
    /// own, once per class; the overridden dealloc releases what it owns before [super dealloc].
    func testDemoLifecyclePartShowsInitializeOrderAndTheDeallocChain() throws {
        let run = try forwarding(["demo", "--part", "lifecycle"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let section = Array(lines.drop { !$0.hasPrefix("== +initialize and an overridden dealloc") }.dropFirst()
            .prefix { !$0.hasPrefix("== summary") })
        XCTAssertEqual(section.map { $0.replacingOccurrences(of: #" {2,}"#, with: " ", options: .regularExpression) }, [
            "+[Shape initialize] self = Shape",
            "+[Shape initialize] self = Circle (Circle has none of its own)",
            "[Circle sides] -> 0 (the first message: superclass first)",
            "[Circle sides] again -> 0 (once per class)",
            "[Shape sides] -> 0 (initialized already)",
            "[buffer release] (its last reference)",
            "-[Buffer dealloc] releases its storage",
            "storage freed",
            "-[Buffer dealloc] calls [super dealloc]",
            "weak ref to buffer -> nil",
        ], run.stdout)
        let summary = run.stdout.components(separatedBy: "== summary").last ?? ""
        let words = summary.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        XCTAssertTrue(words.contains("lifecycle +initialize ran once per class, superclass first (Shape, Circle)"), words)
        XCTAssertTrue(words.contains("released its storage (freed) and called [super dealloc]"), words)
        XCTAssertFalse(run.stdout.contains("== classes and message sends"), "--part lifecycle shows only that part")
    }

    func testDemoRunsEveryPartInOrder() throws {
        let run = try forwarding(["demo", "--part", "all"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let headings = run.stdout.split(separator: "\n").filter { $0.hasPrefix("== ") }.map { $0.dropFirst(3).prefix(12) }
        XCTAssertEqual(headings.prefix(4), ["classes and ", "+initialize ", "forwarding: ", "hooks: befor"])
        XCTAssertTrue(run.stdout.contains("\nlifecycle  +initialize ran once per class"), run.stdout)
    }

    func testDemoModeFilterDrawsOnlyThoseTimelinesAndSummarises() throws {
        let run = try forwarding(["demo", "--mode", "debounce,cooldown"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let rows = run.stdout.split(separator: "\n").filter { $0.contains("|") }.map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(rows.map { String($0.prefix { $0 != " " }) }, ["sent", "debounce", "cooldown"])
        XCTAssertFalse(run.stdout.contains("== classes and message sends"), "--mode alone shows only the throttle part")
        XCTAssertTrue(run.stdout.contains("each mode ran: debounce 2, cooldown 3 (7 rejected)"), run.stdout)
        let peers = try forwarding(["demo", "--mode", "leading,immediate,since,delayed"])
        XCTAssertEqual(peers.status, 0, peers.stderr)
        XCTAssertTrue(peers.stdout.contains("each mode ran: leading 4, immediate 2, since 6, delayed 3"), peers.stdout)
        XCTAssertTrue(peers.stdout.contains("ran 1@50 5@200 9@450; rejected 2,3,4,6,7,8,10"), peers.stdout)
        XCTAssertTrue(peers.stdout.contains("ran 1@0 8@310 9@400 10@530"), peers.stdout)
        XCTAssertTrue(peers.stdout.contains("ran 1@0 4@100 7@200 8@300 9@400 10@500"), peers.stdout)
        let bad = try forwarding(["demo", "--mode", "sometimes"])
        XCTAssertEqual(bad.status, 64)
    }

    // MARK: Running the tool

    /// `swift build --build-tests` (and `swift test`) build the executable beside the tests.
    private struct MissingExecutable: Error {
        let path: String
    }

    private struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    private var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// A path in a fresh directory for this test, removed at teardown.
    private func scratchFile(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("forwarding-tool-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir.appendingPathComponent(name).path
    }

    private func forwarding(_ arguments: [String]) throws -> Run {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("forwarding")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw MissingExecutable(path: binary.path)
        }
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        // The bench's fixtures live until exit by design; LeakSanitizer need not judge the child.
        environment["ASAN_OPTIONS"] = (environment["ASAN_OPTIONS"].map { $0 + ":" } ?? "") + "detect_leaks=0"
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                   stderr: String(decoding: stderr, as: UTF8.self))
    }
}
