// Hooks that cannot be installed and hooks that throw. Tokens
// that outlive what they hooked and re-entrant sends: HookTokenAndReentryTests.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class HookSafetyTests: HookSafetyTestCase {
    // MARK: - Refused hooks

    func testHookingASelectorTheClassDoesNotRespondToFails() throws {
        let root = try makeClass("HookNoSuchRoot")
        let cls = try makeClass("HookNoSuch", superclass: root)
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let o = try cls.createInstance()
        XCTAssertTrue(thrownError { try cls.hook("missing:", .before) { _ in } }?.isHookFailed ?? false)
        XCTAssertTrue(thrownError { try cls.hookClassMethod("add:to:", .before) { _ in } }?.isHookFailed ?? false, "an instance method is not a class method")
        // …except a root class's: as in Objective-C the root metaclass inherits from the root
        // class, so class objects answer its instance methods, and those can be hooked.
        try root.addMethod("rootThing") { (_: ObjectRef) -> Int in 8 }
        XCTAssertEqual(try cls.send("rootThing") as Int, 8)
        let rootHook = try cls.hookClassMethod("rootThing", .after) { ctx in try ctx.setReturnValue(9) }
        XCTAssertEqual(try cls.send("rootThing") as Int, 9)
        XCTAssertEqual(try o.send("rootThing") as Int, 8, "instances are untouched")
        rootHook.remove()
        XCTAssertTrue(thrownError { try o.hook("missing:", .after) { _ in } }?.isHookFailed ?? false)
        // A selector answered only through forwarding is not a method to hook.
        try cls.setForwardInvocation { inv in try inv.setReturnValue(1) }
        XCTAssertEqual(try o.send("viaForwarding") as Int, 1)
        XCTAssertTrue(thrownError { try cls.hook("viaForwarding", .before) { _ in } }?.isHookFailed ?? false)
        if case let .hookFailed(context)? = thrownError({ try cls.hook("missing:", .before) { _ in } }) {
            XCTAssertEqual(context.className, cls.name)
            XCTAssertEqual(context.selector, "missing:")
        } else {
            XCTFail("expected hookFailed")
        }
        // Nothing was installed by the failed attempts.
        XCTAssertNil(cls.ownMethod(for: "missing:"))
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        // A disposed class.
        let gone = try makeCalc("HookDisposed")
        try gone.dispose()
        XCTAssertTrue(thrownError { try gone.hook("add:to:", .before) { _ in } }?.isHookFailed ?? false)
    }

    func testReservedSelectorsCannotBeHooked() throws {
        let cls = try makeCalc("HookReserved")
        try setEveryForwardingStage(on: cls)
        let o = try cls.createInstance()
        for name in ["forwardInvocation:", "methodSignatureForSelector:", "forwardingTargetForSelector:",
                     "doesNotRecognizeSelector:"] {
            XCTAssertTrue(thrownError { try cls.hook(Selector(name), .before) { _ in } }?.isReservedSelector ?? false, name)
            XCTAssertTrue(thrownError { try o.hook(Selector(name), .instead) { _ in } }?.isReservedSelector ?? false, name)
        }
        for name in ["resolveInstanceMethod:", "resolveClassMethod:"] {
            XCTAssertTrue(thrownError { try cls.hookClassMethod(Selector(name), .before) { _ in } }?.isReservedSelector ?? false, name)
            XCTAssertTrue(thrownError { try cls.metaclass.hook(Selector(name), .after) { _ in } }?.isReservedSelector ?? false, name)
        }
        // `dealloc` is hookable where no class defines one: every chain ends in the root's.
        let plain = try makeCalc("HookReservedPlain")
        XCTAssertTrue(try plain.hook("dealloc", .before) { _ in }.remove())
        // Forwarding still works after the refusals.
        XCTAssertEqual(try o.send("anything") as Int, 0)
    }

    func testExpectingTypesAreCheckedAgainstTheSignature() throws {
        let cls = try makeCalc("HookExpecting")
        let o = try cls.createInstance()
        XCTAssertTrue(thrownError { try cls.hook("add:to:", .before, expecting: "d@:dd") { _ in } }?.isSignatureMismatch ?? false)
        XCTAssertTrue(thrownError { try cls.hook("add:to:", .before, expecting: "q@:q") { _ in } }?.isSignatureMismatch ?? false)
        XCTAssertTrue(thrownError { try cls.hook("add:to:", .before, expecting: "v@:qq") { _ in } }?.isSignatureMismatch ?? false)
        XCTAssertTrue(thrownError { try o.hook("add:to:", .before, expecting: "i@:ii") { _ in } }?.isSignatureMismatch ?? false)
        XCTAssertTrue(thrownError { try cls.hook("add:to:", .before, expecting: "q@:q{") { _ in } }?.isMalformedEncoding ?? false)
        if case let .signatureMismatch(context)? = thrownError({ try cls.hook("add:to:", .before, expecting: "d@:dd") { _ in } }) {
            XCTAssertEqual(context.className, cls.name)
            XCTAssertEqual(context.selector, "add:to:")
            XCTAssertEqual(context.expected, "q@:qq")
            XCTAssertEqual(context.actual, "d@:dd")
            XCTAssertEqual(context.operation, "the hook")
            XCTAssertEqual(RuntimeError.signatureMismatch(context).description,
                           "-[\(cls.name) add:to:] has signature \"q@:qq\", but the hook uses \"d@:dd\"")
        } else {
            XCTFail("expected signatureMismatch")
        }
        // Matching (and compatible: l is q on LP64) expectations install.
        nonisolated(unsafe) var ran = 0
        let t1 = try cls.hook("add:to:", .before, expecting: "q@:qq") { _ in ran += 1 }
        let t2 = try cls.hook("add:to:", .before, expecting: "l16@0:8l16q24") { _ in ran += 1 }
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(ran, 2)
        t1.remove()
        t2.remove()
    }

    // MARK: - Hooks that throw

    func testAThrowingHookReachesTheSwiftSenderAndTheProcessSurvives() throws {
        let calls = Locked(0)
        let cls = try makeCalc("HookThrows", calls: calls)
        let o = try cls.createInstance()
        nonisolated(unsafe) var afterRan = 0
        for position in [HookPosition.before, .instead, .after] {
            calls.set(0)
            afterRan = 0
            let t = try cls.hook("add:to:", position) { ctx in
                if position == .instead { try ctx.proceed() }
                throw FwdTestError(message: "refused \(position)")
            }
            let observer = try cls.hook("add:to:", .after) { _ in afterRan += 1 }
            for send in [{ try o.send("add:to:", 1, 2) as Int }, { try o.send("add:to:", 1, 2).intValue ?? -1 }] {
                let e = thrownError(send)
                guard case let .implementationFailed(context)? = e else {
                    XCTFail("\(position): \(String(describing: e))")
                    continue
                }
                XCTAssertEqual(context.className, cls.name)
                XCTAssertEqual(context.selector, "add:to:")
                XCTAssertEqual(context.underlying as? FwdTestError, FwdTestError(message: "refused \(position)"),
                               "the hook's own error, typed")
            }
            switch position {
            case .before:
                XCTAssertEqual(calls.current, 0, "a throwing before-hook stops the call")
                XCTAssertEqual(afterRan, 0)
            case .instead:
                XCTAssertEqual(calls.current, 2)
                XCTAssertEqual(afterRan, 0)
            case .after:
                XCTAssertEqual(calls.current, 2, "the original ran, then the after-hook threw")
            }
            t.remove()
            observer.remove()
            // The next send on this thread is clean.
            XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        }
        // A RuntimeError thrown by a hook arrives unchanged.
        let t = try cls.hook("add:to:", .before) { _ in
            throw RuntimeError.invalidArgument(.init(className: "Custom", selector: "add:to:", reason: "negative"))
        }
        XCTAssertEqual(thrownError { try o.send("add:to:", -1, 2) as Int },
                       .invalidArgument(.init(className: "Custom", selector: "add:to:", reason: "negative")))
        t.remove()
    }

    /// A hook calls a Swift-closure original directly (not through libffi): what the original
    /// throws must still reach Swift and C senders as it does without the hook, for a method
    /// of the class itself and for an inherited one.
    func testAThrowingClosureOriginalUnderAHookReachesTheSender() throws {
        let base = try makeClass("HookedThrowingOriginal")
        try base.addMethod("div:by:") { (_: ObjectRef, a: Int, b: Int) -> Int in
            guard b != 0 else { throw FwdTestError(message: "division by zero") }
            return a / b
        }
        let sub = try makeClass("HookedThrowingOriginalSub", superclass: base)
        for cls in [base, sub] {
            let o = try cls.createInstance()
            let afterRan = Locked(0)
            let tokens = [try cls.hook("div:by:", .instead) { try $0.proceed() },
                          try cls.hook("div:by:", .after) { _ in afterRan.withLock { $0 += 1 } }]
            XCTAssertEqual(try o.send("div:by:", 42, 2) as Int, 21)
            guard case let .implementationFailed(context)? = thrownError({ try o.send("div:by:", 1, 0) as Int }) else {
                XCTFail("\(cls.name): expected implementationFailed")
                continue
            }
            XCTAssertEqual(context.className, cls.name)
            XCTAssertEqual(context.selector, "div:by:")
            let reason = RuntimeError.implementationFailed(context).description
            XCTAssertTrue(reason.contains("division by zero"), reason)
            XCTAssertEqual(afterRan.current, 1, "after-hooks do not run when the original throws")
            let args = FwdCArgs()
            args.add(Int64(1))
            args.add(Int64(0))
            var ret: Int64 = -1
            XCTAssertEqual(args.send(o.raw, "div:by:", &ret), SF_ERR_FORWARDING)
            XCTAssertEqual(ret, 0, "the C caller gets zero")
            XCTAssertTrue(String(cString: sf_last_error_message()).contains("division by zero"))
            XCTAssertEqual(try o.send("div:by:", 9, 3) as Int, 3, "the next send is clean")
            for t in tokens { t.remove() }
        }
    }

    func testAThrowingHookReachesACSenderAsAnErrorCode() throws {
        let cls = try makeCalc("HookThrowsC")
        let o = try cls.createInstance()
        let args = FwdCArgs()
        args.add(Int64(1))
        args.add(Int64(2))
        var ret: Int64 = -1
        XCTAssertEqual(args.send(o.raw, "add:to:", &ret), SF_OK)
        XCTAssertEqual(ret, 3)
        let t = try cls.hook("add:to:", .instead) { _ in throw FwdTestError(message: "C refused") }
        XCTAssertEqual(args.send(o.raw, "add:to:", &ret), SF_ERR_FORWARDING)
        XCTAssertEqual(sf_last_error(), SF_ERR_FORWARDING)
        let message = String(cString: sf_last_error_message())
        XCTAssertTrue(message.contains("C refused"), message)
        XCTAssertTrue(message.contains("add:to:"), message)
        XCTAssertEqual(ret, 0, "the caller gets zero")
        t.remove()
        let t2 = try cls.hook("add:to:", .before) { _ in
            throw RuntimeError.invalidArgument(.init(className: cls.name, selector: "add:to:", reason: "no"))
        }
        XCTAssertEqual(args.send(o.raw, "add:to:", &ret), SF_ERR_INVALID_ARGUMENT)
        t2.remove()
        XCTAssertEqual(args.send(o.raw, "add:to:", &ret), SF_OK)
        XCTAssertEqual(ret, 3)
    }

    func testAThrowingHookDoesNotLeakTheOriginalsObjectResult() throws {
        let cls = try makeCalc("HookThrowsObject")
        let o = try cls.createInstance()
        let t = try cls.hook("make", .after) { _ in throw FwdTestError(message: "after make") }
        XCTAssertTrue(thrownError { try o.send("make") as Object? }?.isImplementationFailed ?? false)
        XCTAssertTrue(thrownError { try o.send("make") }?.isImplementationFailed ?? false)
        t.remove()
        let t2 = try cls.hook("make", .instead) { ctx in
            try ctx.proceed()
            throw FwdTestError(message: "instead make")
        }
        XCTAssertTrue(thrownError { try o.send("make") as Object? }?.isImplementationFailed ?? false)
        t2.remove()
        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 1, "the objects the original returned were released")
    }

    func testAPendingErrorFromADirectCCallDoesNotLeakIntoTheNextSend() throws {
        let cls = try makeCalc("HookStaleError")
        let o = try cls.createInstance()
        let t = try cls.hook("add:to:", .before) { _ in throw FwdTestError(message: "stale") }
        typealias F = @convention(c) (sf_id?, sf_sel?, Int64, Int64) -> Int64
        let sel = Selector("add:to:")
        let f = unsafeBitCast(sf_msg_lookup(o.raw, sel.raw)!, to: F.self)
        XCTAssertEqual(sf_last_error(), SF_OK)
        XCTAssertEqual(f(o.raw, sel.raw, 1, 2), 0)
        // The C caller sees the failure right after the call…
        XCTAssertEqual(sf_last_error(), SF_ERR_FORWARDING)
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("stale"))
        t.remove()
        try cls.addMethod("unrelated") { (_: ObjectRef) -> Int in 5 }
        // …and no later send reports it: not Swift's, typed or dynamic, nor sf_msg_send.
        XCTAssertEqual(try o.send("unrelated") as Int, 5)
        let t2 = try cls.hook("add:to:", .before) { _ in throw FwdTestError(message: "stale 2") }
        defer { t2.remove() }
        let g = unsafeBitCast(sf_msg_lookup(o.raw, sel.raw)!, to: F.self)
        XCTAssertEqual(g(o.raw, sel.raw, 1, 2), 0)
        XCTAssertEqual(try o.send("unrelated").intValue, 5)
        XCTAssertEqual(g(o.raw, sel.raw, 1, 2), 0)
        var ret: Int64 = 0
        XCTAssertEqual(sf_msg_send(o.raw, Selector("unrelated").raw, &ret, nil), SF_OK)
        XCTAssertEqual(ret, 5)
    }
}
