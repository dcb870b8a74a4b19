// Tokens that outlive what they hooked, hooked methods the
// runtime will not remove or move, and hooks that send messages back to their own object.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class HookTokenAndReentryTests: HookSafetyTestCase {
    // MARK: - Tokens that outlive what they hooked

    func testTokensOfADeallocatedObjectOrADisposedClassAreInactive() throws {
        // The object goes while hooked: its private class and hooks go with it.
        let cls = try makeCalc("HookTokenOutlives")
        var token: HookToken?
        do {
            let x = try cls.createInstance()
            token = try x.hook("add:to:", .before) { _ in }
            XCTAssertTrue(token!.isActive)
        }
        fwdCollect()
        XCTAssertFalse(token!.isActive)
        XCTAssertFalse(token!.remove())

        // The class is disposed while hooked: its method table (and the entry the hook sits in)
        // is freed, so removing the hook afterwards must not touch it.
        let doomed = try makeCalc("HookTokenDisposed")
        let t1 = try doomed.hook("add:to:", .before) { _ in }
        let t2 = try doomed.hookClassMethod("make", .after) { _ in }
        try doomed.dispose()
        fwdCollect()
        XCTAssertFalse(t1.isActive)
        XCTAssertFalse(t1.remove())
        XCTAssertFalse(t2.remove())
        fwdCollect()
    }

    func testMethodsWithHooksCannotBeRemovedOrExchanged() throws {
        let cls = try makeCalc("HookGuards")
        try cls.addMethod("sub:from:") { (_: ObjectRef, a: Int, b: Int) in b - a }
        let t = try cls.hook("add:to:", .before) { _ in }
        XCTAssertTrue(thrownError { try cls.removeMethod("add:to:") }?.isHookFailed ?? false)
        XCTAssertTrue(thrownError { try cls.exchangeImplementations("add:to:", "sub:from:") }?.isHookFailed ?? false)
        t.remove()
        try cls.exchangeImplementations("add:to:", "sub:from:")
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("add:to:", 1, 5) as Int, 4)
    }

    /// The C API keeps the same guarantees: exchanging a hooked method is refused with
    /// SF_ERR_HOOK (or a signature mismatch), and setting a hooked method's IMP keeps the
    /// trampoline, so the hook still runs and unhooking restores the new IMP.
    func testTheCAPICannotMoveAHooksTrampoline() throws {
        let cls = try makeCalc("HookGuardsC")
        try cls.addMethod("sub:from:") { (_: ObjectRef, a: Int, b: Int) in b - a }
        try cls.addMethod("half:") { (_: ObjectRef, x: Double) in x / 2 }
        let o = try cls.createInstance()
        let add = sf_class_getInstanceMethod(cls.raw, Selector("add:to:").raw)
        let sub = sf_class_getInstanceMethod(cls.raw, Selector("sub:from:").raw)
        let half = sf_class_getInstanceMethod(cls.raw, Selector("half:").raw)
        sf_method_exchangeImplementations(add, half)
        XCTAssertEqual(sf_last_error(), SF_ERR_SIGNATURE_MISMATCH)
        XCTAssertEqual(try o.send("half:", 3.0) as Double, 1.5)

        let before = Locked(0)
        let t = try cls.hook("add:to:", .before) { _ in before.withLock { $0 += 1 } }
        let trampoline = sf_method_getImplementation(add)
        sf_method_exchangeImplementations(add, sub)
        XCTAssertEqual(sf_last_error(), SF_ERR_HOOK)
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("add:to:"))
        XCTAssertEqual(try o.send("sub:from:", 1, 5) as Int, 4, "nothing was exchanged")

        let subIMP = sf_method_getImplementation(sub)!
        let old = sf_method_setImplementation(add, subIMP)
        XCTAssertNotNil(old)
        XCTAssertEqual(fwdIMP(sf_method_getImplementation(add)), fwdIMP(trampoline), "the trampoline stays")
        XCTAssertEqual(try o.send("add:to:", 1, 5) as Int, 4, "the hook wraps the new IMP")
        XCTAssertEqual(before.current, 1)
        t.remove()
        XCTAssertEqual(fwdIMP(sf_method_getImplementation(add)), fwdIMP(subIMP), "unhook restores the IMP set from C")
        XCTAssertEqual(try o.send("add:to:", 1, 5) as Int, 4)
        XCTAssertEqual(before.current, 1)
    }

    // MARK: - Re-entrant sends

    func testAHookThatSendsTheSameMessageToItsObjectReentersTheHook() throws {
        // Defined behaviour: a send from inside a hook is an ordinary send, so it goes through the
        // trampoline and runs the hooks again (like calling a swizzled method from itself). A hook
        // that recurses must bound itself; ctx.invokeOriginal() / proceed() reach the original
        // without re-entering.
        let calls = Locked(0)
        let cls = try makeCalc("HookReenter", calls: calls)
        let o = try cls.createInstance()
        nonisolated(unsafe) var depth = 0
        nonisolated(unsafe) var entries = 0
        let t = try cls.hook("add:to:", .instead) { ctx in
            entries += 1
            let a: Int = try ctx.argument(at: 0)
            if depth < 3 {
                depth += 1
                defer { depth -= 1 }
                let inner: Int = try ctx.target.send("add:to:", a + 1, 0)
                try ctx.setReturnValue(inner * 10)
            } else {
                try ctx.proceed()
            }
        }
        XCTAssertEqual(try o.send("add:to:", 1, 0) as Int, 4 * 1000, "the innermost send ran the original with 1+3")
        XCTAssertEqual(entries, 4, "the hook ran once per nested send")
        XCTAssertEqual(calls.current, 1)
        t.remove()

        entries = 0
        calls.set(0)
        let t2 = try cls.hook("add:to:", .instead) { ctx in
            entries += 1
            try ctx.invokeOriginal()
            try ctx.invokeOriginal()
            try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 100)
        }
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 103)
        XCTAssertEqual(entries, 1, "invokeOriginal does not come back through the hook")
        XCTAssertEqual(calls.current, 2)
        t2.remove()

        // A hook sending another hooked message to the same object runs that message's hooks.
        nonisolated(unsafe) var log: [String] = []
        let t3 = try cls.hook("make", .before) { ctx in
            log.append("make")
            _ = try ctx.target.send("add:to:", 1, 1) as Int
        }
        let t4 = try cls.hook("add:to:", .before) { _ in log.append("add") }
        _ = try o.send("make") as Object?
        XCTAssertEqual(log, ["make", "add"])
        [t3, t4].forEach { $0.remove() }
        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 1)
    }

    func testUnhookingFromInsideAHook() throws {
        let cls = try makeCalc("HookSelfRemove")
        let o = try cls.createInstance()
        nonisolated(unsafe) var runs = 0
        nonisolated(unsafe) var token: HookToken?
        token = try cls.hook("add:to:", .before) { _ in
            runs += 1
            token?.remove()
        }
        let other = try cls.hook("add:to:", .after) { ctx in try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 1) }
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 4, "the call in progress finishes with the chain it started with")
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 4)
        XCTAssertEqual(runs, 1)
        XCTAssertFalse(token!.isActive)
        other.remove()
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
    }
}
