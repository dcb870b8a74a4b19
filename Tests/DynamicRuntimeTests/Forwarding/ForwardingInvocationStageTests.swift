// Stages 3 and 4 of the forwarding path: forwardInvocation: and doesNotRecognizeSelector:.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class ForwardingInvocationStageTests: ForwardingPipelineTestCase {
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

    /// Sent again once the resolver's refusal is cached (and no forwarding target is defined),
    /// a typed send enters stage 3 directly: every result shape, a lent string, an object's
    /// count, an error and a declared signature come out as on the first send.
    func testRepeatedForwardsKeepEveryShapeOnceTheRefusalIsCached() throws {
        let target = try makeTarget()
        try target.addMethod("echo:") { (_: ObjectRef, s: String) -> String in s + "!" }
        try target.addMethod("swap:") { (_: ObjectRef, p: Point) -> Point in Point(x: p.y, y: p.x) }
        try target.addMethod("positive:") { (_: ObjectRef, a: Int) -> Bool in a > 0 }
        let t = try target.createInstance()
        let payload = try makeClass("FwdRepeatPayload").createInstance()
        try t.setValue(payload.ref, forIvar: "payload")
        let cls = try makeClass("FwdRepeat")
        try cls.setForwardInvocation { inv in try inv.invoke(target: t) }
        let o = try cls.createInstance()
        let declaring = try makeClass("FwdRepeatDeclared")
        try declaring.setMethodSignature { _, _ in try Signature("d@:d") }
        try declaring.setForwardInvocation { inv in try inv.invoke(target: t) }
        let d = try declaring.createInstance()
        for round in 0..<3 {
            XCTAssertEqual(try o.send("add:to:", round, 40) as Int, round + 40)
            XCTAssertEqual(try o.send("scale:", 2.0) as Double, 5.0)
            XCTAssertEqual(try o.send("ratio") as Float, 0.75)
            XCTAssertEqual(try o.send("positive:", round - 1) as Bool, round > 1)
            XCTAssertEqual(try o.send("echo:", "r\(round)") as String, "r\(round)!")
            XCTAssertEqual(try o.send("swap:", Point(x: 1, y: 2)) as Point, Point(x: 2, y: 1))
            do {
                let r: Object? = try o.send("payload")
                XCTAssertEqual(r?.raw, payload.raw)
                XCTAssertEqual(payload.retainCount, 3, "the ivar, `payload` and the result")
            }
            XCTAssertEqual(payload.retainCount, 2, "round \(round): the result was released")
            XCTAssertThrowsError(try o.send("nothing:", round) as Int) { error in
                XCTAssertEqual((error as? RuntimeError)?.selector, "nothing:")
                guard case .doesNotRecognizeSelector? = error as? RuntimeError else {
                    return XCTFail("round \(round): \(error)")
                }
            }
            XCTAssertEqual(try d.send("scale:", 2.0) as Double, 5.0, "the declared types are the caller's")
            XCTAssertThrowsError(try d.send("add:to:", 1, 2) as Int) { error in
                guard case .signatureMismatch? = error as? RuntimeError else {
                    return XCTFail("round \(round): \(error)")
                }
            }
        }
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
}
