import TestSupport
import XCTest
import Dispatch
import Foundation
import CDynamicRuntime
@testable import DynamicRuntime
@testable import MessageThrottle

/// Asserts that `body` throws `invalidArgument` whose reason contains `reason`.
func assertInvalidArgument<T>(_ reason: String, className: String? = nil, selector: String,
                              file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> T) {
    do {
        _ = try body()
        XCTFail("expected invalidArgument, nothing was thrown", file: file, line: line)
    } catch let RuntimeError.invalidArgument(context) {
        if let className { XCTAssertEqual(context.className, className, file: file, line: line) }
        XCTAssertEqual(context.selector, selector, file: file, line: line)
        let why = RuntimeError.invalidArgument(context).description
        XCTAssertTrue(why.contains(reason), "\(why)", file: file, line: line)
    } catch {
        XCTFail("expected invalidArgument, got \(error)", file: file, line: line)
    }
}

/// Deterministic reproductions of the bugs in docs/reliability.md ("Known bugs"), all fixed:
/// each test asserts the correct behaviour and runs by default as a regression test. A newly
/// found bug that crashes or hangs goes here behind `openBug()` until its fix lands.
final class KnownBugTests: XCTestCase {
    // A test of a bug still open starts with `try openBug("…")` (TestSupport).

    static let oversized = [UInt8](repeating: 0xAB, count: 4096)

    // MARK: KB-1 hidden per-object classes outlive unhooking and are reused by address

    func testKB1_hiddenClassIsDisposedWithItsObject() throws {
        let a = try RuntimeClass(name: "KB1.A")
        try a.addMethod("who") { (_: ObjectRef) -> Int in 1 }
        do {
            let o = try a.createInstance()
            try o.hook("who", .after) { _ in }.remove()
        }  // o is deallocated here, unhooked
        XCTAssertNoThrow(try a.dispose(), "the hidden subclass of a deallocated object keeps its class alive")
    }

    func testKB1_newObjectAtTheSameAddressGetsItsOwnClass() throws {
        let a = try RuntimeClass(name: "KB1.Old", ivars: [("x", .int64)])
        let b = try RuntimeClass(name: "KB1.New", ivars: [("y", .int64)])
        try a.addMethod("who") { (_: ObjectRef) -> Int in 1 }
        try b.addMethod("who") { (_: ObjectRef) -> Int in 2 }
        var address: UnsafeMutableRawPointer?
        do {
            let o = try a.createInstance()
            address = UnsafeMutableRawPointer(o.raw)
            try o.hook("who", .after) { _ in }.remove()
        }
        var keep: [Object] = []
        for _ in 0..<1000 {
            let o = try b.createInstance()
            keep.append(o)
            guard UnsafeMutableRawPointer(o.raw) == address else { continue }
            let token = try o.hook("who", .after) { _ in }
            XCTAssertEqual(o.runtimeClass, b, "hooking a new object reused the old object's hidden class")
            XCTAssertEqual(try o.send("who") as Int, 2)
            token.remove()
            return
        }
        throw XCTSkip("the allocator did not reuse the address")
    }

    // MARK: KB-2 DynamicValue.structure byte counts are not checked before copying (crashes)

    // Computed, not `static let`: an immortal indirect-enum box reads as a leak to LSan.
    static var s1: TypeEncoding { .structure(name: "S1", fields: [.int8]) }
    static var pair: TypeEncoding { .structure(name: "Pair", fields: [.double, .double]) }

    func testKB2_dynamicMissPath() throws {
        let o = try RuntimeClass(name: "KB2.Miss").createInstance()
        assertInvalidArgument("argument 1: expected a 1-byte struct '{S1=c}', got 4096 bytes", className: "KB2.Miss", selector: "missing:") {
            try o.send("missing:", DynamicValue.structure(Self.s1, Self.oversized))
        }
        assertInvalidArgument("got 4096 bytes", className: "KB2.Miss", selector: "missing:") {
            try o.send("missing:", DynamicValue.structure(Self.s1, Self.oversized)) as Int
        }
    }

    func testKB2_typedSendWithDynamicValue() throws {
        let c = try RuntimeClass(name: "KB2.Typed")
        try c.addMethod("ptr:", types: "q@:^v") { ret, _ in ret.storeBytes(of: 7, as: Int.self) }
        let o = try c.createInstance()
        // The value's own type travels: a struct where a pointer is expected is a mismatch…
        XCTAssertThrowsError(try o.send("ptr:", DynamicValue.structure(Self.s1, Self.oversized)) as Int) {
            guard case .signatureMismatch = $0 as? RuntimeError else { return XCTFail("\($0)") }
        }
        // …and bytes that do not fill a matching slot are refused before anything is copied.
        assertInvalidArgument("argument 1: expected a 8-byte '^v', got 4096 bytes", className: "KB2.Typed", selector: "ptr:") {
            try o.send("ptr:", DynamicValue.structure(.pointer(.void), Self.oversized)) as Int
        }
        let p = try RuntimeClass(name: "KB2.TypedPair")
        try p.addMethod("pair:", types: "q@:{Pair=dd}") { ret, _ in ret.storeBytes(of: 1, as: Int.self) }
        assertInvalidArgument("argument 1: expected a 16-byte struct '{Pair=dd}', got 4096 bytes", className: "KB2.TypedPair", selector: "pair:") {
            try p.createInstance().send("pair:", DynamicValue.structure(Self.pair, Self.oversized)) as Int
        }
        XCTAssertEqual(try p.createInstance().send("pair:", DynamicValue.structure(Self.pair, [UInt8](repeating: 0, count: 16))) as Int, 1)
        XCTAssertEqual(try o.send("ptr:", DynamicValue.pointer(nil)) as Int, 7)
    }

    func testKB2_invocationSetArgument() throws {
        let sig = try Signature("v@:{Pair=dd}")
        let inv = Invocation(signature: sig, target: ObjectRef.nil, selector: "pair:")
        assertInvalidArgument("argument 1: expected a 16-byte struct '{Pair=dd}', got 4096 bytes", selector: "pair:") {
            try inv.setArgument(DynamicValue.structure(Self.pair, Self.oversized), at: 0)
        }
        XCTAssertNoThrow(try inv.setArgument(DynamicValue.structure(Self.pair, [UInt8](repeating: 1, count: 16)), at: 0))
    }

    func testKB2_hookSetArgument() throws {
        let c = try RuntimeClass(name: "KB2.HookArg")
        try c.addMethod("pair:", types: "v@:{Pair=dd}") { _, _ in }
        let t = try c.hook("pair:", .before) { ctx in
            assertInvalidArgument("argument 1: expected a 16-byte struct '{Pair=dd}', got 4096 bytes",
                                       className: "KB2.HookArg", selector: "pair:") {
                try ctx.setArgument(DynamicValue.structure(Self.pair, Self.oversized), at: 0)
            }
        }
        defer { t.remove() }
        let o = try c.createInstance()
        try o.send("pair:", DynamicValue.structure(Self.pair, [UInt8](repeating: 0, count: 16)))
    }

    func testKB2_hookSetReturnValue() throws {
        let c = try RuntimeClass(name: "KB2.HookRet")
        try c.addMethod("pair", types: "{Pair=dd}@:") { ret, _ in ret.initializeMemory(as: UInt8.self, repeating: 0, count: 16) }
        let t = try c.hook("pair", .after) { ctx in
            assertInvalidArgument("the return value: expected a 16-byte struct '{Pair=dd}', got 4096 bytes",
                                       className: "KB2.HookRet", selector: "pair") {
                try ctx.setReturnValue(DynamicValue.structure(Self.pair, Self.oversized))
            }
            try ctx.setReturnValue(DynamicValue.structure(Self.pair, [UInt8](repeating: 0, count: 8) + withUnsafeBytes(of: 2.5) { Array($0) }))
        }
        defer { t.remove() }
        let r = try c.createInstance().send("pair")
        guard case let .structure(_, bytes) = r else { return XCTFail("\(r)") }
        XCTAssertEqual(bytes.count, 16)
        XCTAssertEqual(bytes[8...].withUnsafeBytes { $0.loadUnaligned(as: Double.self) }, 2.5)
    }

    // MARK: KB-3 a sender inside a rule's hook while the rule is discarded (crash)

    func testKB3_discardWhileASenderIsInsideTheRulesHook() throws {
        let c = try RuntimeClass(name: "KB3.Target")
        try c.addMethod("ping:") { (_: ObjectRef, id: Int) -> Int in id + 1 }
        let o = try c.createInstance()
        let engine = Engine()
        var rule: Rule? = Rule(target: c, selector: "ping:", duration: .seconds(3600), mode: .last)
        try engine.apply(rule!)
        let entered = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        // A before-hook runs before the rule's instead-hook, in the same trampoline call: it
        // holds the sender after it loaded the chain that still contains the rule.
        let gate = try c.hook("ping:", .before) { ctx in
            if try ctx.argument(at: 0, as: Int.self) == 99 { entered.signal(); proceed.wait() }
        }
        Thread { _ = try? o.send("ping:", 99) as Int; done.signal() }.start()
        entered.wait()
        XCTAssertTrue(engine.discard(rule!, pending: .flush))
        rule = nil
        proceed.signal()  // crashes: "Attempted to read an unowned reference but object … was already destroyed"
        done.wait()
        gate.remove()
    }

    // MARK: KB-4 a message deferred while its rule is discarded is never performed

    func testKB4_deferredDuringDiscardIsFlushed() throws {
        let c = try RuntimeClass(name: "KB4.Target")
        let performed = Locked<[Int]>([])
        try c.addMethod("ping:") { (_: ObjectRef, id: Int) -> Int in performed.append(id); return id + 1 }
        let o = try c.createInstance()
        let engine = Engine()
        let rule = Rule(target: c, selector: "ping:", duration: .seconds(3600), mode: .last)
        let entered = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        // alwaysInvoke runs inside the rule's hook, before the limiter sees the message.
        rule.alwaysInvoke = { _, ctx in
            if (try? ctx.argument(at: 0, as: Int.self)) == 99 { entered.signal(); proceed.wait() }
            return false
        }
        try engine.apply(rule)
        let result = Locked<[Int]>([])
        Thread { result.append((try? o.send("ping:", 99) as Int) ?? -1); done.signal() }.start()
        entered.wait()
        XCTAssertTrue(engine.discard(rule, pending: .flush))
        proceed.signal()
        done.wait()
        XCTAssertEqual(result.current, [0], "the caller was told the message was deferred")
        XCTAssertEqual(performed.current, [99], "a deferred message of a rule discarded with .flush was never performed")
    }

    // MARK: KB-5 NULL reaches closure parameters of non-optional type (crashes)

    func testKB5_nilSelectorArgument() throws {
        let c = try RuntimeClass(name: "KB5.Sel")
        try c.addMethod("sel:") { (_: ObjectRef, s: Selector) -> Int in s.name.count }
        let o = try c.createInstance()
        assertInvalidArgument("argument 1: expected a non-optional Selector", className: "KB5.Sel", selector: "sel:") {
            try o.send("sel:", DynamicValue.selector(nil))
        }
        // From C: a NULL selector in the argument buffer.
        var nilSel: sf_sel? = nil
        var ret: Int64 = -1
        let status = withUnsafeMutablePointer(to: &nilSel) { p -> sf_status in
            var args: [UnsafeMutableRawPointer?] = [UnsafeMutableRawPointer(p)]
            return sf_msg_send(o.raw, Selector("sel:").raw, &ret, &args)
        }
        XCTAssertEqual(status, SF_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(ret, 0)
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("non-optional Selector"))
        XCTAssertEqual(try o.send("sel:", Selector("abc")) as Int, 3)
    }

    func testKB5_nilObjectArgument() throws {
        let c = try RuntimeClass(name: "KB5.Obj")
        try c.addMethod("keep:") { (_: ObjectRef, o: Object) -> Int in o.retainCount }
        let o = try c.createInstance()
        assertInvalidArgument("argument 1: expected a non-optional Object", className: "KB5.Obj", selector: "keep:") {
            try o.send("keep:", ObjectRef.nil)
        }
        assertInvalidArgument("non-optional Object", selector: "keep:") { try o.send("keep:", ObjectRef.nil) as Int }
        XCTAssertGreaterThan(try o.send("keep:", o) as Int, 1)
    }

    func testKB5_forwardInvocationSentDirectly() throws {
        let c = try RuntimeClass(name: "KB5.FI")
        nonisolated(unsafe) var delivered = 0
        try c.setForwardInvocation { _ in delivered += 1 }
        let o = try c.createInstance()
        assertInvalidArgument("got NULL", className: "KB5.FI", selector: "forwardInvocation:") {
            try o.send("forwardInvocation:", DynamicValue.pointer(nil))
        }
        // A pointer that is not the record being forwarded is refused, never dereferenced.
        var junk = [UInt8](repeating: 0xAB, count: 64)
        try junk.withUnsafeMutableBytes { buf in
            for send in [{ try o.send("forwardInvocation:", DynamicValue.pointer(UnsafeRawPointer(buf.baseAddress!))) },
                         { try o.send("forwardInvocation:", UnsafeRawPointer(buf.baseAddress!)) }] {
                XCTAssertThrowsError(try send()) {
                    guard case let .reservedSelector(context) = $0 as? RuntimeError else { return XCTFail("\($0)") }
                    XCTAssertEqual(context.className, "KB5.FI")
                    XCTAssertEqual(context.selector, "forwardInvocation:")
                }
            }
        }
        XCTAssertEqual(delivered, 0)
        try o.send("anything", as: Void.self)  // the runtime's own delivery still works
        XCTAssertEqual(delivered, 1)
    }

    func testKB5_methodSignatureSentDirectlyWithNil() throws {
        let c = try RuntimeClass(name: "KB5.MS")
        try c.setMethodSignature { _, sel in _ = sel.name; return nil }
        assertInvalidArgument("argument 1: expected a non-optional Selector",
                              className: "KB5.MS", selector: "methodSignatureForSelector:") {
            try c.createInstance().send("methodSignatureForSelector:", DynamicValue.selector(nil))
        }
    }

    // MARK: KB-6 the empty cache's bucket overlaps another global: first lookups can spin forever

    func testKB6_firstLookupAfterACacheGrew() throws {
        let fresh = try RuntimeClass(name: "KB6.Fresh")
        try fresh.addMethod("x") { (_: ObjectRef) -> Int in 1 }
        let o = try fresh.createInstance()
        let big = try RuntimeClass(name: "KB6.Big")
        for i in 0..<12 { try big.addMethod(Selector("m\(i)")) { (_: ObjectRef) -> Int in i } }
        // Grow big's cache past 8 entries: the old cache goes to the retired list
        // until the next collectGarbage(), which nothing below calls.
        let b = try big.createInstance()
        for i in 0..<12 { _ = try b.send(Selector("m\(i)")) as Int }
        // fresh was never looked up: it still has the shared empty cache, whose bucket 0 is
        // whatever global the linker placed behind sf_empty_cache (here: retired_head).
        let finished = DispatchSemaphore(value: 0)
        Thread { _ = try? o.send("x") as Int; finished.signal() }.start()
        XCTAssertEqual(finished.wait(timeout: .now() + 5), .success,
                       "the first send to a class spins in sf_cache_probe (left spinning on a background thread)")
    }

    /// Under AddressSanitizer: a global-buffer-overflow read in sf_cache_probe, on the first
    /// lookup of any class through a C entry point (Swift call sites inline the probe without
    /// ASan instrumentation, so only C callers are caught).
    func testKB6_firstLookupReadsPastTheEmptyCache() throws {
        let fresh = try RuntimeClass(name: "KB6.Asan")
        // A miss returns the forwarding IMP (objc4's _objc_msgForward), never NULL.
        XCTAssertEqual(sf_class_getMethodImplementation(fresh.raw, Selector("x").raw).map { IMP($0) }, IMP.forwarding)
    }

    // MARK: KB-8 sf_msg_send(NULL, …) returned one error and recorded another

    func testKB8_nilReceiverStatusAndLastErrorAgree() throws {
        var ret: Int64 = -1
        XCTAssertEqual(sf_msg_send(nil, Selector("anything").raw, &ret, nil), SF_ERR_NIL_RECEIVER)
        XCTAssertEqual(sf_last_error(), SF_ERR_NIL_RECEIVER)
        XCTAssertEqual(ret, -1, "nothing is written on failure")
    }

    // MARK: KB-7 dynamic sends through forwardInvocation: with a declared signature

    func testKB7_dynamicSendThroughAProxy() throws {
        let calc = try RuntimeClass(name: "KB7.Calc")
        try calc.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let proxyClass = try Proxy.makeClass(name: "KB7.Proxy")
        let p = try Proxy.create(proxyClass, wrapping: try calc.createInstance())
        XCTAssertEqual(try p.send("add:to:", 1, 2) as Int, 3)  // typed: works
        XCTAssertEqual(try p.send("add:to:", 1, 2).intValue, 3)  // dynamic: signatureMismatch
    }
}
