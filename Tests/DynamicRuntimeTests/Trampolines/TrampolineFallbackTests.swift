// The libffi fallback has tests of its own — the signature matrix, hooks, word bodies
// and forwarding with SF_TRAMPOLINES=0 (in a child process: the variable is read once per
// process). TrampolineTests forces it in the test process too, with sf_tramp_set_enabled.
import TestSupport
import CDynamicRuntime
import Foundation
import XCTest
@testable import DynamicRuntime

/// The libffi closures, forced with SF_TRAMPOLINES=0 in a child process.
final class TrampolineFallbackTests: XCTestCase {
    func testEverySignatureClassThroughLibffiClosures() throws {
        guard ProcessInfo.processInfo.environment["SF_TRAMPOLINES"] == "0" else {
            try runInChild("DynamicRuntimeTests.TrampolineFallbackTests/testEverySignatureClassThroughLibffiClosures")
            return
        }
        XCTAssertEqual(sf_tramp_enabled(), 0, "SF_TRAMPOLINES=0 turns the trampolines off")
        // libffi's closures as callees of both callers (ffi_call and the direct call).
        XCTAssertEqual(try checkTrampolineSignatures("libffi closure"), 0)
        // And the trampolines called by ffi_call from the same process.
        sf_tramp_set_enabled(1)
        defer { sf_tramp_set_enabled(0) }
        XCTAssertEqual(try checkTrampolineSignatures("trampoline (test hook)"), trampolineSignatures.count)
    }

    func testHooksWorkOnTheFallback() throws {
        guard ProcessInfo.processInfo.environment["SF_TRAMPOLINES"] == "0" else {
            try runInChild("DynamicRuntimeTests.TrampolineFallbackTests/testHooksWorkOnTheFallback")
            return
        }
        let cls = try makeClass("TrampFallbackHook")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        XCTAssertEqual(cls.ownMethod(for: "add:to:")!.implementation.owner?.isTrampoline, false)
        let token = try cls.hook("add:to:", .instead) { ctx in
            try ctx.setArgument(10, at: 0)
            try ctx.proceed()
        }
        XCTAssertEqual(cls.ownMethod(for: "add:to:")!.implementation.owner?.isTrampoline, false)
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 12)
        token.remove()
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
    }

    func testWordBodiesAndForwardingStayOffOnTheFallback() throws {
        guard ProcessInfo.processInfo.environment["SF_TRAMPOLINES"] == "0" else {
            try runInChild("DynamicRuntimeTests.TrampolineFallbackTests/testWordBodiesAndForwardingStayOffOnTheFallback")
            return
        }
        let cls = try makeClass("TrampFallbackWord")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        let box = cls.ownMethod(for: "add:to:")!.implementation.owner!
        XCTAssertFalse(box.hasWordBody, "SF_TRAMPOLINES=0: typed sends go through the libffi closure")
        XCTAssertFalse(box.isTrampoline)
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        let forwarder = try makeClass("TrampFallbackForwarder")
        try forwarder.setForwardingTarget { _, _ in o.ref }
        XCTAssertEqual(try forwarder.createInstance().send("add:to:", 4, 5) as Int, 9)
        let proxy = try Proxy.create(try makeProxyClass("TrampFallbackProxy"), wrapping: o)
        XCTAssertEqual(try proxy.send("add:to:", 6, 7) as Int, 13)
        XCTAssertEqual(try proxy.send("add:to:", 6, 7) as Int, 13)
    }

    /// Runs one test of this bundle in a child process with the trampolines off (posix_spawn:
    /// Foundation's Process leaks a side table per run, which LeakSanitizer reports).
    private func runInChild(_ test: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("tramp-child-\(getpid()).log").path
        defer { unlink(log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let env = ProcessInfo.processInfo.environment.filter { $0.key != "SF_TRAMPOLINES" }
            .map { "\($0.key)=\($0.value)" } + ["SF_TRAMPOLINES=0"]
        let argv = [CommandLine.arguments[0], test]
        var cArgv = argv.map { strdup($0) } + [nil]
        var cEnv = env.map { strdup($0) } + [nil]
        defer { (cArgv + cEnv).forEach { free($0) } }
        var pid: pid_t = 0
        XCTAssertEqual(posix_spawn(&pid, argv[0], &actions, nil, &cArgv, &cEnv), 0, file: file, line: line)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        XCTAssertEqual(status, 0, "child run of \(test):\n\(text.suffix(4000))", file: file, line: line)
        XCTAssertTrue(text.contains("Executed 1 test"), "the child ran the test:\n\(text.suffix(2000))", file: file, line: line)
    }
}
