// Stages 1 and 2 of the forwarding path: the resolver, then forwardingTargetForSelector:.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class ForwardingPipelineTests: ForwardingPipelineTestCase {
    // MARK: - Stage 1: resolveInstanceMethod: / resolveClassMethod:

    func testResolveInstanceMethodAddsMethodAndTheRetrySucceedsOnce() throws {
        let cls = try makeClass("FwdResolve")
        let calls = Locked<[String]>([])
        try cls.setResolveInstanceMethod { c, sel in
            calls.withLock { $0.append(sel.name) }
            XCTAssertEqual(c, cls, "the resolver receives the receiver's class")
            guard sel.name == "triple:" else { return false }
            try c.addMethod(sel) { (_: ObjectRef, x: Int) in x * 3 }
            return true
        }
        let o = try cls.createInstance()
        XCTAssertTrue(o.responds(to: "triple:"), "respondsToSelector asks the resolver, as objc4's does")
        XCTAssertEqual(try o.send("triple:", 5) as Int, 15)
        XCTAssertEqual(try o.send("triple:", 7) as Int, 21)
        XCTAssertEqual(try o.send("triple:", 8).intValue, 24)
        let other = try cls.createInstance()
        XCTAssertEqual(try other.send("triple:", 1) as Int, 3)
        XCTAssertEqual(calls.current, ["triple:"], "the resolver runs once: the added method is found (and cached) afterwards")
        XCTAssertNotNil(cls.ownMethod(for: "triple:"))
        XCTAssertTrue(o.responds(to: "triple:"))
    }

    func testResolveInstanceMethodFirstSendThroughDynamicAndCPaths() throws {
        // The first, resolving send comes from a dynamic send, and from sf_msg_send.
        let cls = try makeClass("FwdResolveDyn")
        let calls = Locked(0)
        try cls.setResolveInstanceMethod { c, sel in
            calls.withLock { $0 += 1 }
            try c.addMethod(sel) { (_: ObjectRef, x: Int) in x + 100 }
            return true
        }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("plusHundred:", 1).intValue, 101)
        XCTAssertEqual(calls.current, 1)

        var ret: Int64 = 0
        var arg: Int64 = 5
        let status = withUnsafeMutablePointer(to: &arg) { pa in
            var args: [UnsafeMutableRawPointer?] = [UnsafeMutableRawPointer(pa)]
            return args.withUnsafeMutableBufferPointer { sf_msg_send(o.raw, Selector("plusHundredC:").raw, &ret, $0.baseAddress) }
        }
        XCTAssertEqual(status, SF_OK)
        XCTAssertEqual(ret, 105)
        XCTAssertEqual(calls.current, 2)
    }

    func testResolverOnSuperclassAddsToTheReceiversClass() throws {
        let base = try makeClass("FwdResolveBase")
        let sub = try makeClass("FwdResolveSub", superclass: base)
        let seen = Locked<[String]>([])
        try base.setResolveInstanceMethod { c, sel in
            seen.withLock { $0.append(c.name) }
            try c.addMethod(sel) { (_: ObjectRef) -> Int in 7 }
            return true
        }
        let s = try sub.createInstance()
        XCTAssertEqual(try s.send("seven") as Int, 7)
        XCTAssertEqual(seen.current, [sub.name])
        XCTAssertNotNil(sub.ownMethod(for: "seven"))
        XCTAssertNil(base.ownMethod(for: "seven"))
    }

    func testResolverReturningTrueWithoutAddingGoesOnToLaterStages() throws {
        let cls = try makeClass("FwdResolveLies")
        let calls = Locked(0)
        try cls.setResolveInstanceMethod { _, _ in
            calls.withLock { $0 += 1 }
            return true
        }
        let o = try cls.createInstance()
        let e = thrownError { try o.send("ghost") as Int }
        XCTAssertEqual(e, .doesNotRecognizeSelector(.init(className: cls.name, selector: "ghost", isClassMethod: false)))
        XCTAssertEqual(calls.current, 1)
    }

    func testResolverThatThrowsReachesTheSender() throws {
        let cls = try makeClass("FwdResolveThrows")
        try cls.setResolveInstanceMethod { _, _ in throw FwdTestError(message: "resolver says no") }
        let o = try cls.createInstance()
        let e = thrownError { try o.send("anything") as Int }
        guard case .implementationFailed? = e else { return XCTFail("\(String(describing: e))") }
        XCTAssertEqual(e?.underlying as? FwdTestError, FwdTestError(message: "resolver says no"), "the resolver's own error, typed")
        // The thread is clean afterwards.
        try cls.addMethod("fine") { (_: ObjectRef) -> Int in 1 }
        XCTAssertEqual(try o.send("fine") as Int, 1)
    }

    func testResolveClassMethod() throws {
        let cls = try makeClass("FwdResolveClass")
        let classCalls = Locked<[String]>([])
        let instanceCalls = Locked(0)
        try cls.setResolveClassMethod { c, sel in
            classCalls.withLock { $0.append(sel.name) }
            XCTAssertEqual(c, cls)
            guard sel.name == "answer" else { return false }
            try c.metaclass.addMethod(sel) { (_: ObjectRef) -> Int in 42 }
            return true
        }
        try cls.setResolveInstanceMethod { _, _ in
            instanceCalls.withLock { $0 += 1 }
            return false
        }
        XCTAssertEqual(try cls.send("answer") as Int, 42)
        XCTAssertEqual(try cls.send("answer") as Int, 42)
        XCTAssertEqual(classCalls.current, ["answer"])
        XCTAssertEqual(instanceCalls.current, 0, "a class-method miss asks resolveClassMethod: only")
        XCTAssertNotNil(cls.metaclass.ownMethod(for: "answer"))
        // Instances do not get the class method.
        let o = try cls.createInstance()
        let e = thrownError { try o.send("answer") as Int }
        XCTAssertEqual(e, .doesNotRecognizeSelector(.init(className: cls.name, selector: "answer", isClassMethod: false)))
        XCTAssertEqual(instanceCalls.current, 1)
        // An unresolved class method names the class side.
        let e2 = thrownError { try cls.send("unknownClassThing") as Int }
        XCTAssertEqual(e2, .doesNotRecognizeSelector(.init(className: cls.name, selector: "unknownClassThing", isClassMethod: true)))
    }

    // MARK: - Stage 2: forwardingTargetForSelector:

    func testForwardingTargetGetsTheSameArgumentsAndNoInvocationIsBuilt() throws {
        nonisolated(unsafe) let receivers = Locked<[sf_id?]>([])
        let target = try makeTarget(receivers: receivers)
        let t = try target.createInstance()
        let fwd = try makeClass("FwdFast", ivars: [("other", .object)])
        let asked = Locked<[String]>([])
        let laterStages = Locked(0)
        try fwd.setForwardingTarget { recv, sel in
            asked.withLock { $0.append(sel.name) }
            return try recv.value(ofIvar: "other", as: ObjectRef.self)
        }
        try fwd.setMethodSignature { _, _ in
            laterStages.withLock { $0 += 1 }
            return nil
        }
        try fwd.setForwardInvocation { _ in laterStages.withLock { $0 += 1 } }
        let f = try fwd.createInstance()
        try f.setValue(t.ref, forIvar: "other")

        XCTAssertEqual(try f.send("add:to:", 20, 22) as Int, 42)
        XCTAssertEqual(try f.send("add:to:", 1, 2).intValue, 3)
        XCTAssertEqual(receivers.current, [t.raw, t.raw], "the target runs as the receiver")
        XCTAssertEqual(try f.send("scale:", 4.0) as Double, 10.0)
        XCTAssertEqual(try f.send("frame:", Point(x: 1, y: 2)) as FwdRect,
                       FwdRect(origin: Point(x: 1, y: 2), size: FwdSize(width: 10, height: 20)))
        XCTAssertEqual(try f.send("ratio") as Float, 0.75)
        XCTAssertEqual(asked.current, ["add:to:", "add:to:", "scale:", "frame:", "ratio"])
        XCTAssertEqual(laterStages.current, 0, "fast forwarding builds no invocation and asks no signature")
    }

    func testForwardingTargetObjectReturnKeepsRetainCountsBalanced() throws {
        let target = try makeTarget()
        let payloadClass = try makeClass("FwdPayload")
        let payload = try payloadClass.createInstance()
        let t = try target.createInstance()
        try t.setValue(payload.ref, forIvar: "payload")
        XCTAssertEqual(payload.retainCount, 2)
        let fwd = try makeClass("FwdFastObj")
        try fwd.setForwardingTarget { _, _ in t.ref }
        let f = try fwd.createInstance()
        do {
            let r: Object? = try f.send("payload")
            XCTAssertEqual(r?.raw, payload.raw)
            XCTAssertEqual(payload.retainCount, 3, "the caller owns one reference")
        }
        XCTAssertEqual(payload.retainCount, 2)
        do {
            let d = try f.send("payload")
            XCTAssertEqual(d.objectValue?.raw, payload.raw)
        }
        XCTAssertEqual(payload.retainCount, 2)
        XCTAssertEqual(t.retainCount, 1, "the forwarding target is not leaked")
    }

    func testForwardingTargetThatForwardsFurther() throws {
        let target = try makeTarget()
        let t = try target.createInstance()
        let middle = try makeClass("FwdMiddle")
        try middle.setForwardingTarget { _, _ in t.ref }
        let m = try middle.createInstance()
        let front = try makeClass("FwdFront")
        try front.setForwardingTarget { _, _ in m.ref }
        let f = try front.createInstance()
        XCTAssertEqual(try f.send("mul:by:", 6, 7) as Int, 42)
        XCTAssertEqual(try f.send("scale:", 2.0) as Double, 5.0)
        // The last object in the chain does not know it either.
        let e = thrownError { try f.send("unknownAnywhere") as Int }
        XCTAssertEqual(e, .doesNotRecognizeSelector(.init(className: target.name, selector: "unknownAnywhere", isClassMethod: false)))
        XCTAssertEqual(t.retainCount, 1)
        XCTAssertEqual(m.retainCount, 1)
    }

    func testForwardingTargetReturningSelfOrNilGoesOnToTheNextStage() throws {
        let target = try makeTarget()
        let t = try target.createInstance()
        let cls = try makeClass("FwdSelfOrNil")
        let mode = Locked(0)
        let invocations = Locked<[String]>([])
        try cls.setForwardingTarget { recv, _ in mode.current == 0 ? recv : nil }
        try cls.setForwardInvocation { inv in
            invocations.withLock { $0.append(inv.selector.name) }
            try inv.invoke(target: t)
        }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("add:to:", 2, 3) as Int, 5, "self as forwarding target: on to forwardInvocation:")
        mode.set(1)
        XCTAssertEqual(try o.send("mul:by:", 2, 3) as Int, 6, "nil forwarding target: on to forwardInvocation:")
        XCTAssertEqual(invocations.current, ["add:to:", "mul:by:"])

        // Without forwardInvocation: the next stage is doesNotRecognizeSelector:.
        let bare = try makeClass("FwdNilOnly")
        try bare.setForwardingTarget { _, _ in nil }
        let b = try bare.createInstance()
        XCTAssertEqual(thrownError { try b.send("add:to:", 1, 2) as Int },
                       .doesNotRecognizeSelector(.init(className: bare.name, selector: "add:to:", isClassMethod: false)))
    }
}
