// Bench cases 7d, 7e: a typed send's stage 3 stores its values straight into the invocation
// record and calls each stage's method where its lookup found it. Every stage is still asked
// on every call, in Objective-C's order, and a declared signature other than the caller's is
// asked once and checked.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class ForwardingTypedStageTests: ForwardingPipelineTestCase {
    func testEveryStageIsAskedOnEveryCallInOrder() throws {
        let t = try makeTarget("TypedStageTarget").createInstance()
        let tref = t.ref
        let cls = try makeClass("TypedStageForwarder")
        let log = Locked<[String]>([])
        let useTarget = Locked(false)
        try cls.setForwardingTarget { _, sel in
            log.append("target \(sel.name)")
            return useTarget.current ? tref : nil
        }
        try cls.setMethodSignature { _, sel in
            log.append("signature \(sel.name)")
            return nil
        }
        try cls.setForwardInvocation { inv in
            log.append("invocation \(inv.selector.name) \(try inv.argument(at: 0, as: Int.self))")
            try inv.invoke(target: tref)
        }
        let o = try cls.createInstance()
        for i in 0..<3 { XCTAssertEqual(try o.send("add:to:", i, 100) as Int, i + 100) }
        XCTAssertEqual(log.current, (0..<3).flatMap {
            ["target add:to:", "signature add:to:", "invocation add:to: \($0)"]
        })

        // A per-call answer is honoured on the next call, both ways.
        log.set([])
        useTarget.set(true)
        XCTAssertEqual(try o.send("add:to:", 7, 8) as Int, 15)
        useTarget.set(false)
        XCTAssertEqual(try o.send("add:to:", 9, 9) as Int, 18)
        XCTAssertEqual(log.current, ["target add:to:", "target add:to:", "signature add:to:", "invocation add:to: 9"])
    }

    func testADeclaredSignatureOtherThanTheCallersIsAskedOnceAndChecked() throws {
        let t = try makeTarget("TypedDeclTarget").createInstance()
        let tref = t.ref
        let cls = try makeClass("TypedDeclForwarder")
        let asked = Locked(0)
        let seen = Locked<[String]>([])
        let declared = Locked("v@:qq")
        try cls.setMethodSignature { _, _ in
            asked.withLock { $0 += 1 }
            return try Signature(declared.current)
        }
        try cls.setForwardInvocation { inv in
            seen.append(inv.signature.encoding)
            try inv.invoke(target: tref)
        }
        let o = try cls.createInstance()

        // An `Int` caller against a declared void return: refused, naming class and selector.
        XCTAssertThrowsError(try o.send("add:to:", 1, 2) as Int) { error in
            guard case RuntimeError.signatureMismatch(let info) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(info.className.map { $0.hasPrefix("TypedDeclForwarder") }, true, "\(info)")
            XCTAssertEqual(info.selector, "add:to:")
        }
        XCTAssertEqual(asked.current, 1, "asked once, not again by the frame path")
        XCTAssertEqual(seen.current, [])

        // A caller that takes no value gets the declared signature's record.
        declared.set("q@:qq")
        try o.send("add:to:", 3, 4, as: Void.self)
        XCTAssertEqual(asked.current, 2)
        XCTAssertEqual(seen.current, ["q@:qq"])

        // The caller's own signature, declared: the record is the caller's, the value returned.
        XCTAssertEqual(try o.send("add:to:", 5, 6) as Int, 11)
        XCTAssertEqual(asked.current, 3)
        XCTAssertEqual(seen.current, ["q@:qq", "q@:qq"])
    }

    // Bench case 7c: once the resolver's refusal is cached, a typed send asks the forwarding
    // target and calls the target's method with registers only. Every kind of target still
    // gets the call, each send asks again, and every target is released.
    func testRepeatedFastForwardsReachEveryKindOfTarget() throws {
        let receivers = Locked<[sf_id?]>([])
        let t = try makeTarget("TypedRepeatTarget", receivers: receivers).createInstance()
        let tref = t.ref
        let relay = try makeClass("TypedRepeatRelay")
        try relay.setForwardingTarget { _, _ in tref }
        let r = try relay.createInstance()
        let rref = r.ref
        let cls = try makeClass("TypedRepeatForwarder")
        let asked = Locked(0)
        let viaRelay = Locked(false)
        try cls.setForwardingTarget { _, _ in
            asked.withLock { $0 += 1 }
            return viaRelay.current ? rref : tref
        }
        let o = try cls.createInstance()
        let counts = (t.retainCount, r.retainCount)
        for i in 0..<3 {
            XCTAssertEqual(try o.send("add:to:", i, 10) as Int, i + 10)
            XCTAssertEqual(try o.send("scale:", Double(i)) as Double, Double(i) * 2.5)
            // Other types than the method's: the general call, on the same target.
            try o.send("add:to:", i, 1, as: Void.self)
        }
        // A target that forwards the message again.
        viaRelay.set(true)
        for i in 0..<3 { XCTAssertEqual(try o.send("add:to:", i, 20) as Int, i + 20) }
        XCTAssertEqual(asked.current, 12)
        XCTAssertEqual(receivers.current.count, 9)
        XCTAssertTrue(receivers.current.allSatisfy { $0 == tref.raw })
        XCTAssertEqual(t.retainCount, counts.0)
        XCTAssertEqual(r.retainCount, counts.1)
    }

    func testRepeatedForwardingTargetPingPongIsAnErrorEveryTime() throws {
        let (x, y) = try forwardingPingPong(("TypedPing", "TypedPong"))
        for _ in 0..<3 {
            XCTAssertThrowsError(try x.send("where:", 1, as: Int.self)) { error in
                guard case RuntimeError.forwardingFailed(let info) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(info.selector, "where:")
            }
        }
        try x.setValue(ObjectRef.nil, forIvar: "peer")
        try y.setValue(ObjectRef.nil, forIvar: "peer")
        XCTAssertEqual(x.retainCount, 1)
        XCTAssertEqual(y.retainCount, 1)
    }

    func testAStageMethodReplacedBetweenCallsIsTheOneCalled() throws {
        let t = try makeTarget("TypedSwapTarget").createInstance()
        let tref = t.ref
        let cls = try makeClass("TypedSwapForwarder")
        try cls.setForwardInvocation { inv in try inv.invoke(target: tref) }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        try cls.setForwardInvocation { inv in
            inv.selector = "mul:by:"
            try inv.invoke(target: tref)
        }
        XCTAssertEqual(try o.send("add:to:", 3, 4) as Int, 12)
        try cls.setForwardingTarget { _, _ in tref }
        XCTAssertEqual(try o.send("add:to:", 3, 4) as Int, 7)
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a - b }
        XCTAssertEqual(try o.send("add:to:", 3, 4) as Int, -1)
    }
}
