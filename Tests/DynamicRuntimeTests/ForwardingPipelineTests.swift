// Acceptance tests for issue 3: every stage of the forwarding path, in Objective-C's order.
import TestSupport
import CShims
import XCTest
@testable import DynamicRuntime

final class ForwardingPipelineTests: XCTestCase {
    var objectBaseline = 0

    override func setUp() {
        super.setUp()
        fwdCollect()
        objectBaseline = Runtime.liveObjectCount
    }

    /// A class whose instances answer `add:to:`, `scale:` (double), `payload` (object) and
    /// `frame` (a 32-byte struct), recording the receiver they ran on.
    func makeTarget(_ base: String = "FwdTarget", receivers: Locked<[sf_id?]>? = nil) throws -> RuntimeClass {
        nonisolated(unsafe) let receivers = receivers
        let cls = try makeClass(base, ivars: [("payload", .object)])
        try cls.addMethod("add:to:") { (me: ObjectRef, a: Int, b: Int) -> Int in
            receivers?.withLock { $0.append(me.raw) }
            return a + b
        }
        try cls.addMethod("mul:by:") { (_: ObjectRef, a: Int, b: Int) in a * b }
        try cls.addMethod("scale:") { (_: ObjectRef, x: Double) in x * 2.5 }
        try cls.addMethod("payload") { (me: ObjectRef) -> Object? in try me.value(ofIvar: "payload", as: Object?.self) }
        try cls.addMethod("frame:") { (_: ObjectRef, p: Point) in
            FwdRect(origin: p, size: FwdSize(width: 10, height: 20))
        }
        try cls.addMethod("ratio") { (_: ObjectRef) -> Float in 0.75 }
        return cls
    }

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

    // MARK: - Stage 3: methodSignatureForSelector: + forwardInvocation:

    func testForwardInvocationInspectsTheMessage() throws {
        let cls = try makeClass("FwdInspect")
        let seen = Locked<[String]>([])
        nonisolated(unsafe) let receiver = Locked<sf_id?>(nil)
        try cls.setForwardInvocation { inv in
            receiver.set(inv.target.raw)
            let a: Int = try inv.argument(at: 0)
            let b: Double = try inv.argument(at: 1)
            let s: CString = try inv.argument(at: 2)
            seen.withLock {
                $0.append("\(inv.selector.name) n=\(inv.argumentCount) sig=\(inv.signature.encoding) a=\(a) b=\(b) s=\(s.string ?? "nil") retained=\(inv.argumentsRetained)")
            }
            try inv.setReturnValue(a + Int(b) + (s.string?.count ?? 0))
        }
        let o = try cls.createInstance()
        let text = fwdStaticCString("four")
        let r: Int = try o.send("combine:with:and:", 10, 2.5, text)
        XCTAssertEqual(r, 16)
        XCTAssertEqual(receiver.current, o.raw)
        XCTAssertEqual(seen.current, ["combine:with:and: n=3 sig=q@:qd* a=10 b=2.5 s=four retained=false"])
    }

    func testForwardInvocationModifiesArgumentsAndSelectorAndRetargets() throws {
        let target = try makeTarget()
        let t = try target.createInstance()
        let cls = try makeClass("FwdRewrite")
        try cls.setForwardInvocation { inv in
            switch inv.selector.name {
            case "addTen:to:":
                try inv.setArgument(try inv.argument(at: 0, as: Int.self) + 10, at: 0)
                inv.selector = "add:to:"
            case "times:":
                inv.selector = "mul:by:"
            default:
                break
            }
            try inv.invoke(target: t)
            XCTAssertEqual(inv.target.raw, t.raw)
        }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("addTen:to:", 1, 2) as Int, 13)
        XCTAssertEqual(try o.send("times:", 6, 7) as Int, 42)
        XCTAssertEqual(try o.send("add:to:", 6, 7) as Int, 13)
    }

    func testForwardInvocationThatDoesNotInvokeReturnsZeroOrItsValue() throws {
        let cls = try makeClass("FwdSwallow")
        try cls.setForwardInvocation { inv in
            if inv.selector.name == "setByHook" { try inv.setReturnValue(99) }
        }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("swallowed", 5) as Int, 0)
        XCTAssertEqual(try o.send("swallowedD") as Double, 0)
        XCTAssertNil(try o.send("swallowedO") as Object?)
        XCTAssertEqual(try o.send("swallowedR") as FwdRect, FwdRect(origin: Point(x: 0, y: 0), size: FwdSize(width: 0, height: 0)))
        XCTAssertEqual(try o.send("setByHook") as Int, 99)
        try o.send("voidMessage", 1, as: Void.self)
    }

    func testForwardInvocationReturnValuesOfEveryShape() throws {
        let target = try makeTarget()
        let t = try target.createInstance()
        let cls = try makeClass("FwdShapes")
        try cls.setForwardInvocation { inv in try inv.invoke(target: t) }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("scale:", 3.0) as Double, 7.5)
        XCTAssertEqual(try o.send("ratio") as Float, 0.75)
        XCTAssertEqual(try o.send("frame:", Point(x: -1, y: 0.5)) as FwdRect,
                       FwdRect(origin: Point(x: -1, y: 0.5), size: FwdSize(width: 10, height: 20)))
        XCTAssertEqual(try o.send("add:to:", Int.max - 1, 1) as Int, Int.max)
    }

    func testForwardInvocationObjectReturnsHaveCorrectRetainCounts() throws {
        let target = try makeTarget()
        let t = try target.createInstance()
        let payloadClass = try makeClass("FwdPayload2")
        let payload = try payloadClass.createInstance()
        let other = try payloadClass.createInstance()
        try t.setValue(payload.ref, forIvar: "payload")
        XCTAssertEqual(payload.retainCount, 2)

        let cls = try makeClass("FwdObjReturn")
        let mode = Locked(0)
        try cls.setForwardInvocation { inv in
            switch mode.current {
            case 0:
                try inv.invoke(target: t)
            case 1:
                // Invoke twice; the first result must not leak.
                try inv.invoke(target: t)
                try inv.invoke(target: t)
            case 2:
                // Read the result (a +1 we own), then replace it with another object.
                try inv.invoke(target: t)
                let r: Object? = try inv.returnValue()
                XCTAssertEqual(r?.raw, payload.raw)
                try inv.setReturnValue(Optional(other))
            default:
                try inv.setReturnValue(Optional(other))
            }
        }
        let o = try cls.createInstance()
        for m in 0...3 {
            mode.set(m)
            let expected = m >= 2 ? other : payload
            let before = expected.retainCount
            do {
                let r: Object? = try o.send("payload")
                XCTAssertEqual(r?.raw, expected.raw, "mode \(m)")
                XCTAssertEqual(expected.retainCount, before + 1, "mode \(m): the caller owns exactly one reference")
            }
            XCTAssertEqual(payload.retainCount, 2, "mode \(m)")
            XCTAssertEqual(other.retainCount, 1, "mode \(m)")
        }
    }

    func testMethodSignatureForSelectorIsUsedAndCheckedAgainstTheCaller() throws {
        let cls = try makeClass("FwdSig")
        let asked = Locked<[String]>([])
        try cls.setMethodSignature { _, sel in
            asked.withLock { $0.append(sel.name) }
            switch sel.name {
            case "sum:and:": return try Signature("q@:qq")
            case "lie:": return try Signature("d@:d")
            default: return nil
            }
        }
        try cls.setForwardInvocation { inv in
            if inv.selector.name == "sum:and:" {
                XCTAssertEqual(inv.signature.encoding, "q@:qq")
                try inv.setReturnValue(try inv.argument(at: 0, as: Int.self) + inv.argument(at: 1, as: Int.self))
            }
        }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("sum:and:", 4, 5) as Int, 9)
        // The class declares d@:d but the caller sends an Int: a mismatch, not garbage.
        XCTAssertTrue(thrownError { try o.send("lie:", 3) as Int }?.isSignatureMismatch ?? false)
        XCTAssertEqual(asked.current, ["sum:and:", "lie:"])
    }

    func testForwardInvocationErrorsReachTheSender() throws {
        let cls = try makeClass("FwdInvThrows")
        try cls.setForwardInvocation { inv in throw FwdTestError(message: "no thanks \(inv.selector.name)") }
        let o = try cls.createInstance()
        let e = thrownError { try o.send("please", 1) as Int }
        guard case .implementationFailed? = e else { return XCTFail("\(String(describing: e))") }
        XCTAssertEqual(e?.underlying as? FwdTestError, FwdTestError(message: "no thanks please"), "the handler's own error, typed")
        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 1)
    }

    // MARK: - Stage 4: doesNotRecognizeSelector:

    func testDoesNotRecognizeSelectorDefaultIsAThrownError() throws {
        let cls = try makeClass("FwdDNR")
        let o = try cls.createInstance()
        XCTAssertEqual(thrownError { try o.send("nope:", 1) as Int },
                       .doesNotRecognizeSelector(.init(className: cls.name, selector: "nope:", isClassMethod: false)))
        XCTAssertEqual(thrownError { try o.send("nope:", 1) },
                       .doesNotRecognizeSelector(.init(className: cls.name, selector: "nope:", isClassMethod: false)))
        XCTAssertEqual(thrownError { try o.send("nope", as: Void.self) },
                       .doesNotRecognizeSelector(.init(className: cls.name, selector: "nope", isClassMethod: false)))
        XCTAssertEqual(thrownError { try cls.send("classNope") as Int },
                       .doesNotRecognizeSelector(.init(className: cls.name, selector: "classNope", isClassMethod: true)))
        let e = thrownError { try o.send("nope:", 1) as Int }
        XCTAssertTrue(e.map { "\($0)" }?.contains(cls.name) ?? false)
        XCTAssertTrue(e.map { "\($0)" }?.contains("nope:") ?? false)
        // A message to nil is not an error and answers zero, as in Objective-C.
        XCTAssertEqual(try ObjectRef.nil.send("nope:", 1) as Int, 0)
    }

    func testDefinedDoesNotRecognizeSelectorRunsAndTheErrorIsStillThrown() throws {
        let cls = try makeClass("FwdDNRDefined")
        let calls = Locked<[String]>([])
        nonisolated(unsafe) let receivers = Locked<[sf_id?]>([])
        try cls.setDoesNotRecognizeSelector { recv, sel in
            calls.withLock { $0.append(sel.name) }
            receivers.withLock { $0.append(recv.raw) }
        }
        let o = try cls.createInstance()
        XCTAssertEqual(thrownError { try o.send("missing:", 2.0) as Double },
                       .doesNotRecognizeSelector(.init(className: cls.name, selector: "missing:", isClassMethod: false)))
        XCTAssertEqual(calls.current, ["missing:"])
        XCTAssertEqual(receivers.current, [o.raw])

        var ret: Int64 = 0
        let status = sf_msg_send(o.raw, Selector("missingFromC").raw, &ret, nil)
        XCTAssertEqual(status, SF_ERR_UNRECOGNIZED_SELECTOR)
        XCTAssertEqual(calls.current, ["missing:", "missingFromC"])
    }

    func testDoesNotRecognizeSelectorFromCIsAnErrorCode() throws {
        let cls = try makeClass("FwdDNRC")
        try cls.addMethod("ok") { (_: ObjectRef) -> Int in 1 }
        let o = try cls.createInstance()
        var ret: Int64 = -1
        XCTAssertEqual(sf_msg_send(o.raw, Selector("ok").raw, &ret, nil), SF_OK)
        XCTAssertEqual(ret, 1)
        XCTAssertEqual(sf_last_error(), SF_OK)

        XCTAssertEqual(sf_msg_send(o.raw, Selector("notThere:").raw, &ret, nil), SF_ERR_UNRECOGNIZED_SELECTOR)
        XCTAssertEqual(sf_last_error(), SF_ERR_UNRECOGNIZED_SELECTOR)
        let message = String(cString: sf_last_error_message())
        XCTAssertTrue(message.contains(cls.name), message)
        XCTAssertTrue(message.contains("notThere:"), message)

        XCTAssertEqual(sf_msg_send(nil, Selector("ok").raw, &ret, nil), SF_ERR_NIL_RECEIVER)
        XCTAssertEqual(sf_last_error(), SF_ERR_NIL_RECEIVER)

        // A class method from C.
        XCTAssertEqual(sf_msg_send(sf_class_as_object(cls.raw), Selector("notThereEither").raw, &ret, nil),
                       SF_ERR_UNRECOGNIZED_SELECTOR)
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("+["))
    }

    func testMsgLookupMissRecordsUnrecognizedSelector() throws {
        let cls = try makeClass("FwdLookupMiss")
        try cls.addMethod("ok") { (_: ObjectRef) -> Int in 1 }
        let o = try cls.createInstance()
        var ret: Int64 = 0
        XCTAssertEqual(sf_msg_send(o.raw, Selector("ok").raw, &ret, nil), SF_OK)
        XCTAssertNil(sf_msg_lookup(o.raw, Selector("lookupMiss").raw))
        XCTAssertEqual(sf_last_error(), SF_ERR_UNRECOGNIZED_SELECTOR)
    }

    // MARK: - Forwarding from C (sf_msg_send)

    func testCSendsThroughEachStage() throws {
        let target = try makeTarget()
        let t = try target.createInstance()

        // Fast forwarding.
        let fast = try makeClass("FwdCFast")
        try fast.setForwardingTarget { _, _ in t.ref }
        let f = try fast.createInstance()
        let args = FwdCArgs()
        args.add(Int64(40))
        args.add(Int64(2))
        var ret: Int64 = 0
        XCTAssertEqual(args.send(f.raw, "add:to:", &ret), SF_OK)
        XCTAssertEqual(ret, 42)

        // forwardInvocation: without a signature: a C caller's types are unknown.
        let blind = try makeClass("FwdCBlind")
        try blind.setForwardInvocation { inv in try inv.invoke(target: t) }
        let b = try blind.createInstance()
        XCTAssertEqual(args.send(b.raw, "add:to:", &ret), SF_ERR_FORWARDING)
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("methodSignatureForSelector"))

        // With a signature.
        try blind.setMethodSignature { _, sel in sel.name == "add:to:" ? try Signature("q@:qq") : nil }
        ret = 0
        XCTAssertEqual(args.send(b.raw, "add:to:", &ret), SF_OK)
        XCTAssertEqual(ret, 42)

        // A NULL argument pointer is an error, not a crash.
        let holes = FwdCArgs()
        holes.add(Int64(1))
        holes.ptrs.append(nil)
        XCTAssertEqual(holes.send(b.raw, "add:to:", &ret), SF_ERR_INVALID_ARGUMENT)
    }

    func testCForwardedReturnWritesNoMoreThanTheReturnType() throws {
        // A C caller passes storage that fits the return type: 4 bytes for a float, the
        // struct's size for a struct, a word for integers (as libffi does for direct calls).
        let target = try makeClass("FwdCNarrowTarget")
        try target.addMethod("ratio") { (_: ObjectRef) -> Float in 0.75 }
        try target.addMethod("color") { (_: ObjectRef) in FwdRGB(r: 1, g: 2, b: 3) }
        let t = try target.createInstance()
        let proxy = try makeProxyClass("FwdCNarrowProxy")
        let p = try Proxy.create(proxy, wrapping: t)

        func check(_ receiver: sf_id, _ sel: Selector, valueBytes: Int, file: StaticString = #filePath, line: UInt = #line) -> [UInt8] {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
            defer { buffer.deallocate() }
            buffer.initializeMemory(as: UInt8.self, repeating: 0xAA, count: 16)
            XCTAssertEqual(sf_msg_send(receiver, sel.raw, buffer, nil), SF_OK, file: file, line: line)
            let bytes = Array(UnsafeRawBufferPointer(start: buffer, count: 16))
            XCTAssertEqual(Array(bytes[valueBytes...]), Array(repeating: 0xAA, count: 16 - valueBytes),
                           "bytes past the \(valueBytes)-byte return value were overwritten", file: file, line: line)
            return Array(bytes[..<valueBytes])
        }
        // Direct calls (libffi) write exactly the value.
        let direct = check(t.raw, "ratio", valueBytes: 4)
        XCTAssertEqual(direct, withUnsafeBytes(of: Float(0.75)) { Array($0) })
        XCTAssertEqual(check(t.raw, "color", valueBytes: 3), [1, 2, 3])
        // Forwarded calls must behave the same.
        XCTAssertEqual(check(p.raw, "ratio", valueBytes: 4), direct)
        XCTAssertEqual(check(p.raw, "color", valueBytes: 3), [1, 2, 3])
    }

    func testDynamicSendsThroughForwardingAreTypedByTheMethodThatRuns() throws {
        let target = try makeTarget()
        try target.addMethod("origin:") { (_: ObjectRef, p: Point) in Point(x: p.y, y: p.x) }
        let t = try target.createInstance()
        let fast = try makeClass("FwdDynFast")
        try fast.setForwardingTarget { _, _ in t.ref }
        let f = try fast.createInstance()
        let proxy = try Proxy.create(try makeProxyClass("FwdDynProxy"), wrapping: t)
        let point = Point(x: 1, y: 2)
        for receiver in [f, proxy] {
            XCTAssertEqual(try receiver.send("add:to:", 2, 3).intValue, 5)
            XCTAssertEqual(try receiver.send("scale:", 2.0).doubleValue, 5.0)
            XCTAssertEqual(try receiver.send("origin:", point).structValue(as: Point.self), Point(x: 2, y: 1))
            // A 32-byte struct is more than the storage a dynamic send starts with: it gets a
            // buffer of its own, and the value.
            XCTAssertEqual(try receiver.send("frame:", point).structValue(as: FwdRect.self),
                           FwdRect(origin: point, size: FwdSize(width: 10, height: 20)))
            // Typed sends state the type and get the value.
            XCTAssertEqual(try receiver.send("frame:", point) as FwdRect,
                           FwdRect(origin: point, size: FwdSize(width: 10, height: 20)))
        }
    }

    // MARK: - Loops and robustness

    func testForwardInvocationResendingToSelfIsAnErrorNotAStackOverflow() throws {
        let cls = try makeClass("FwdLoopInvoke")
        try cls.setForwardInvocation { inv in try inv.invoke() }
        let o = try cls.createInstance()
        XCTAssertTrue(thrownError { try o.send("spin:", 1) as Int }?.isForwardingFailed ?? false)

        let cls2 = try makeClass("FwdLoopResend")
        try cls2.setForwardInvocation { inv in _ = try inv.target.send(inv.selector, arguments: inv.argumentValues) }
        let o2 = try cls2.createInstance()
        XCTAssertTrue(thrownError { try o2.send("spin:", 1) as Int }?.isForwardingFailed ?? false)
        XCTAssertTrue(thrownError { try o2.send("spin:", 1) }?.isForwardingFailed ?? false)

        // From C too.
        try cls.setMethodSignature { _, _ in try Signature("q@:q") }
        let args = FwdCArgs()
        args.add(Int64(1))
        var ret: Int64 = 0
        XCTAssertEqual(args.send(o.raw, "spin:", &ret), SF_ERR_FORWARDING)
    }

    func testForwardingTargetPingPongIsAnError() throws {
        let a = try makeClass("FwdPing", ivars: [("peer", .object)])
        let b = try makeClass("FwdPong", ivars: [("peer", .object)])
        for c in [a, b] {
            try c.setForwardingTarget { recv, _ in try recv.value(ofIvar: "peer", as: ObjectRef.self) }
        }
        let x = try a.createInstance()
        let y = try b.createInstance()
        try x.setValue(y.ref, forIvar: "peer")
        try y.setValue(x.ref, forIvar: "peer")
        XCTAssertTrue(thrownError { try x.send("where", as: Int.self) }?.isForwardingFailed ?? false)
        XCTAssertTrue(thrownError { try y.send("where:", 1.5) }?.isForwardingFailed ?? false)
        // Break the cycle so both can go.
        try x.setValue(ObjectRef.nil, forIvar: "peer")
        try y.setValue(ObjectRef.nil, forIvar: "peer")
        XCTAssertEqual(x.retainCount, 1)
        XCTAssertEqual(y.retainCount, 1)
    }

    func testFailedForwardingLeavesTheThreadUsable() throws {
        let target = try makeTarget()
        let t = try target.createInstance()
        let looping = try makeClass("FwdLoopMany")
        try looping.setForwardInvocation { inv in try inv.invoke() }
        let l = try looping.createInstance()
        let good = try makeClass("FwdGoodAfterLoops")
        try good.setForwardInvocation { inv in try inv.invoke(target: t) }
        let g = try good.createInstance()
        // If the nesting depth leaked on errors, this would start failing after a few rounds.
        for _ in 0..<150 {
            XCTAssertTrue(thrownError { try l.send("spin") as Int }?.isForwardingFailed ?? false)
        }
        XCTAssertEqual(try g.send("add:to:", 1, 1) as Int, 2)
        // Deep but finite forwarding chains still work.
        var chain = t
        var keep: [Object] = []
        for i in 0..<40 {
            let c = try makeClass("FwdChain\(i)", ivars: [("next", .object)])
            try c.setForwardingTarget { recv, _ in try recv.value(ofIvar: "next", as: ObjectRef.self) }
            let o = try c.createInstance()
            try o.setValue(chain.ref, forIvar: "next")
            keep.append(o)
            chain = o
        }
        XCTAssertEqual(try chain.send("add:to:", 20, 22) as Int, 42)
    }

    func testEveryStageIsAMethodCCodeCouldDefine() throws {
        // The Swift setters install real methods under the Objective-C names.
        let cls = try makeClass("FwdRealMethods")
        try cls.setForwardingTarget { _, _ in nil }
        try cls.setMethodSignature { _, _ in nil }
        try cls.setForwardInvocation { _ in }
        try cls.setDoesNotRecognizeSelector { _, _ in }
        try cls.setResolveInstanceMethod { _, _ in false }
        try cls.setResolveClassMethod { _, _ in false }
        for name in ["forwardingTargetForSelector:", "methodSignatureForSelector:", "forwardInvocation:", "doesNotRecognizeSelector:"] {
            XCTAssertNotNil(cls.ownMethod(for: Selector(name)), name)
            XCTAssertTrue(sf_class_respondsToSelector(cls.raw, Selector(name).raw), name)
        }
        XCTAssertNotNil(cls.metaclass.ownMethod(for: "resolveInstanceMethod:"))
        XCTAssertNotNil(cls.metaclass.ownMethod(for: "resolveClassMethod:"))
    }
}

/// Argument storage for sf_msg_send: one heap slot per argument.
final class FwdCArgs {
    var ptrs: [UnsafeMutableRawPointer?] = []

    func add<T: BitwiseCopyable>(_ value: T) {
        let p = UnsafeMutableRawPointer.allocate(byteCount: max(MemoryLayout<T>.size, 16), alignment: 16)
        p.initializeMemory(as: UInt8.self, repeating: 0, count: max(MemoryLayout<T>.size, 16))
        p.storeBytes(of: value, as: T.self)
        ptrs.append(p)
    }

    func send(_ obj: sf_id?, _ sel: Selector, _ ret: UnsafeMutableRawPointer?) -> sf_status {
        ptrs.withUnsafeMutableBufferPointer { sf_msg_send(obj, sel.raw, ret, $0.baseAddress) }
    }

    deinit { for p in ptrs { p?.deallocate() } }
}
