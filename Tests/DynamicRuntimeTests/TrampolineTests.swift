// Issue 12: the trampoline slots that replace libffi closures — every signature class through
// closures and hooks, W^X at all times, slots near their targets, reuse only after the grace
// period, and the libffi fallback (forced by SF_TRAMPOLINES=0 in a child process, since the
// variable is read once per process, and by the test hook sf_tramp_set_enabled in this one).
import TestSupport
import CShims
import Foundation
import XCTest
@testable import DynamicRuntime

final class TrampolineTests: XCTestCase {
    override func setUp() {
        super.setUp()
        sf_tramp_set_enabled(1)
    }

    func testEverySignatureClassThroughTrampolines() throws {
        let count = try checkTrampolineSignatures("trampoline")
        XCTAssertEqual(count, trampolineSignatures.count, "every listed signature is carried by a trampoline")
    }

    /// Exactly which signatures fall back to libffi's closure: of everything the parser accepts
    /// (the scalar codes, pointers, structs of them), those with a long double by value — as an
    /// argument, a return or a struct field. The entries carry no x87 values.
    func testOnlyLongDoubleSignaturesKeepTheLibffiClosure() throws {
        var codes: [Character] = []
        for i in 0..<sf_type_code_count() { codes.append(Character(UnicodeScalar(UInt8(bitPattern: sf_type_code_character(i))))) }
        XCTAssertTrue(codes.contains("D") && codes.contains("q") && codes.count >= 20, "the type-code table")
        for code in codes where code != "v" {
            let x87 = code == "D"
            let c = code == "^" ? "^v" : String(code)
            for types in ["\(c)@:\(c)", "v@:\(c)", "\(c)@:", "v@:qqqqqq\(c)", "{S=\(c)q}@:{S=\(c)q}",
                          "v@:{S=q{T=\(c)}}", "{L=qqq\(c)}@:"] {
                let sig = try Signature(types)
                XCTAssertEqual(sig.storage.layout == nil, x87, "\(types): \(x87 ? "falls back" : "carried by the entries")")
            }
        }
        for types in ["^D@:^D", "v@:^{S=Dq}"] {  // behind a pointer it is a pointer
            XCTAssertNotNil(try Signature(types).storage.layout, types)
        }
    }

    func testNoMappingIsWritableAndExecutable() throws {
        XCTAssertEqual(writableExecutableMappings(), [], "before")
        let watcher = MappingWatcher()
        let cls = try makeClass("TrampWX")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        try cls.addMethod("scale:") { (_: ObjectRef, x: Double) -> Double in x * 2 }
        let token = try cls.hook("add:to:", .instead) { try $0.proceed() }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("add:to:", 2, 3) as Int, 5)
        XCTAssertEqual(try o.send("scale:", 1.5) as Double, 3)
        XCTAssertEqual(writableExecutableMappings(), [], "after closures and a hook")

        // The slot's code is read+execute, its words read+write, and they point where they should.
        let imp = cls.ownMethod(for: "scale:")!.implementation
        XCTAssertEqual(imp.owner?.isTrampoline, true)
        XCTAssertEqual(mappingPermissions(of: imp.address)?.prefix(3), "r-x")
        XCTAssertEqual(mappingPermissions(of: imp.address + 4096)?.prefix(3), "rw-")
        var context: UnsafeMutableRawPointer?
        var target: UnsafeRawPointer?
        sf_tramp_words(imp.address, &context, &target)
        XCTAssertEqual(context, UnsafeMutableRawPointer(imp.owner!.context!))
        XCTAssertEqual(target, unsafeBitCast(sf_tramp_entry as @convention(c) () -> Void, to: UnsafeRawPointer.self))
        token.remove()
        XCTAssertEqual(writableExecutableMappings(), [], "after unhooking")

        // What the entries do not carry keeps libffi's closure, in a page of its own made
        // read+execute once written: long double closures, hooks and forwarding, and every
        // closure and hook while the fallback is forced.
        let ld = try makeClass("TrampWXLongDouble")
        try ld.addMethod("twice:") { (_: ObjectRef, x: Float80) -> Float80 in x * 2 }
        let ldIMP = ld.ownMethod(for: "twice:")!.implementation
        XCTAssertEqual(ldIMP.owner?.isTrampoline, false, "long double: a libffi closure")
        XCTAssertEqual(mappingPermissions(of: ldIMP.address)?.prefix(3), "r-x")
        let ldHook = try ld.hook("twice:", .after) { ctx in
            guard case let .longDouble(r) = ctx.returnValue else { return }
            try ctx.setReturnValue(r + 1)
        }
        XCTAssertEqual(ldHook.hook.entry, .libffi)
        let ldObject = try ld.createInstance()
        XCTAssertEqual(try ldObject.send("twice:", Float80(1.5)) as Float80, 4)
        typealias LD = @convention(c) (sf_id?, sf_sel?, Float80) -> Float80
        let ldHooked = unsafeBitCast(try XCTUnwrap(sf_msg_lookup(ldObject.raw, Selector("twice:").raw)), to: LD.self)
        XCTAssertEqual(ldHooked(ldObject.raw, Selector("twice:").raw, 2), 5, "the hooked long double method from C")
        try ld.addMethod("half:", implementation: .forwarding, types: "D@:D")
        try ld.setForwardingTarget { _, _ in o.ref }
        try cls.addMethod("half:") { (_: ObjectRef, x: Float80) -> Float80 in x / 2 }
        let half = unsafeBitCast(IMP.forwarding.pointer, to: LD.self)
        XCTAssertEqual(half(ldObject.raw, Selector("half:").raw, 3), 1.5, "a forwarded long double call from C")
        ldHook.remove()

        sf_tramp_set_enabled(0)
        defer { sf_tramp_set_enabled(1) }
        let fallback = try makeClass("TrampWXFallback")
        try fallback.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        try fallback.addMethod("mix:with:") { (_: ObjectRef, a: Int, x: Double) -> Double in Double(a) + x }
        let fallbackIMP = fallback.ownMethod(for: "add:to:")!.implementation
        XCTAssertEqual(fallbackIMP.owner?.isTrampoline, false)
        XCTAssertEqual(mappingPermissions(of: fallbackIMP.address)?.prefix(3), "r-x")
        let fallbackHook = try fallback.hook("mix:with:", .instead) { try $0.proceed() }
        XCTAssertEqual(fallbackHook.hook.entry, .libffi)
        let f = try fallback.createInstance()
        XCTAssertEqual(try f.send("add:to:", 4, 5) as Int, 9)
        XCTAssertEqual(try f.send("mix:with:", 4, 0.5) as Double, 4.5)
        fallbackHook.remove()
        sf_tramp_set_enabled(1)

        let seen = watcher.stop()
        XCTAssertEqual(seen.found, [], "a mapping was writable and executable while closures and hooks were made")
        XCTAssertGreaterThan(seen.reads, 1)
        XCTAssertEqual(writableExecutableMappings(), [], "after")
    }

    /// Every slot jumps to code within a rel32 of itself (the chunks are placed below the
    /// library's text): closure slots of each kind, hook slots of each entry.
    func testSlotsLieNearTheCodeTheyJumpTo() throws {
        let cls = try makeClass("TrampNear")
        try cls.addMethod("one") { (_: ObjectRef) -> Int in 1 }                                // %rdx thunk
        try cls.addMethod("two:") { (_: ObjectRef, a: Int) -> Int in a }                        // %rcx thunk
        try cls.addMethod("three:b:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }        // %r8 thunk
        try cls.addMethod("four:b:c:") { (_: ObjectRef, a: Int, b: Int, c: Int) -> Int in a + b + c }  // %r9
        try cls.addMethod("five:") { (_: ObjectRef, x: Double) -> Double in x }                // spill entry
        try cls.addMethod("six:", types: "q@:qqqqqqq", rawBody: { _, _ in })                   // stack arguments
        let names = ["one", "two:", "three:b:", "four:b:c:", "five:", "six:"]
        var slots = names.map { ($0, cls.ownMethod(for: Selector($0))!.implementation) }
        let hooked = ["one", "five:", "six:"]
        let hooks = try hooked.map { name in try cls.hook(Selector(name), .instead) { try $0.proceed() } }
        XCTAssertEqual(Set(hooks.map { "\($0.hook.entry)" }).count, 3, "one hook of each entry")
        slots += hooked.map { ("hook of \($0)", cls.ownMethod(for: Selector($0))!.implementation) }
        for (name, imp) in slots {
            XCTAssertEqual(mappingPermissions(of: imp.address)?.prefix(3), "r-x", name)
            var target: UnsafeRawPointer?
            sf_tramp_words(imp.address, nil, &target)
            let t = UInt(bitPattern: try XCTUnwrap(target, name)), slot = UInt(bitPattern: imp.address)
            XCTAssertLessThan(slot > t ? slot - t : t - slot, 1 << 31, "\(name): within a rel32 of its target")
        }
        hooks.forEach { $0.remove() }
    }

    func testRetiredSlotIsReusedOnlyAfterTheGracePeriod() throws {
        let target = unsafeBitCast(sf_tramp_entry as @convention(c) () -> Void, to: UnsafeRawPointer.self)
        let retired = try XCTUnwrap(sf_tramp_alloc(nil, target))
        var handedOut: [UnsafeMutableRawPointer] = []
        let reader = Thread.current.description
        // A reader that entered before the slot was retired may still be running its code.
        sf_rcu_enter()
        sf_tramp_free(retired)
        var free = 0
        sf_tramp_stats(nil, nil, &free)
        for _ in 0...(free + 1) {  // exhausts the free list, so the allocator must look at retired slots
            let s = try XCTUnwrap(sf_tramp_alloc(nil, target))
            XCTAssertNotEqual(s, retired, "a slot retired during a read section was handed out again (\(reader))")
            handedOut.append(s)
        }
        sf_rcu_exit()
        // After the grace period it comes back.
        handedOut.forEach { sf_tramp_free($0) }
        sf_tramp_stats(nil, nil, &free)
        var reused = false
        var again: [UnsafeMutableRawPointer] = []
        for _ in 0...(free + handedOut.count + 1) {
            let s = try XCTUnwrap(sf_tramp_alloc(nil, target))
            again.append(s)
            if s == retired { reused = true; break }
        }
        again.forEach { sf_tramp_free($0) }
        XCTAssertTrue(reused, "the retired slot is reused once no reader can be in it")
    }

    func testASlotIsImmutableOnceHandedOut() throws {
        let cls = try makeClass("TrampImmutable")
        try cls.addMethod("value") { (_: ObjectRef) -> Int in 1 }
        let first = cls.ownMethod(for: "value")!.implementation
        var before: UnsafeMutableRawPointer?
        sf_tramp_words(first.address, &before, nil)
        // Replacing the method publishes a new slot; the old one keeps its words and still works.
        let previous = try cls.replaceMethod("value") { (_: ObjectRef) -> Int in 2 }
        XCTAssertEqual(previous, first)
        XCTAssertNotEqual(cls.ownMethod(for: "value")!.implementation, first)
        var after: UnsafeMutableRawPointer?
        sf_tramp_words(first.address, &after, nil)
        XCTAssertEqual(before, after)
        let o = try cls.createInstance()
        let call = unsafeBitCast(previous!.pointer, to: (@convention(c) (sf_id?, sf_sel?) -> Int).self)
        XCTAssertEqual(call(o.raw, Selector("value").raw), 1)
        XCTAssertEqual(try o.send("value") as Int, 2)
    }

    func testAThrowingClosureThroughATrampolineReturnsZeroAndReportsTheError() throws {
        struct Boom: Error {}
        let cls = try makeClass("TrampThrow")
        try cls.addMethod("fail:") { (_: ObjectRef, x: Double) throws -> Double in
            if x < 0 { throw Boom() }
            return x
        }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("fail:", 2.0) as Double, 2)
        XCTAssertThrowsError(try o.send("fail:", -1.0) as Double)
        let imp = cls.ownMethod(for: "fail:")!.implementation
        let call = unsafeBitCast(imp.pointer, to: (@convention(c) (sf_id?, sf_sel?, Double) -> Double).self)
        XCTAssertEqual(call(o.raw, Selector("fail:").raw, -1), 0)
        XCTAssertNotEqual(sf_last_error(), SF_OK)
        _ = try? Runtime.rethrowPending()
    }
}

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
