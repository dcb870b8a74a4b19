// Regression tests for forwarding-related bugs found outside the forwarding files (CDynamicRuntime,
// MessageSend, CAPI, Object). All are fixed; each test reproduces the original failure.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class ForwardingKnownBugTests: XCTestCase {
    // KB-6 (the empty cache) and KB-8 (sf_msg_send(NULL)) are reproduced once, in
    // ReliabilityTests/KnownBugTests.swift.

    /// Regression (fixed, MessageSend.typedMiss): a typed `as: Void.self` send forwarded to a
    /// method returning an object dropped the method's +1 reference: the object leaked.
    func testVoidSendForwardedToAnObjectReturningMethodDoesNotLeak() throws {
        let target = try RuntimeClass(name: uniqueClassName("FwdBugLeakTarget"))
        try target.addMethod("make") { (me: ObjectRef) -> Object? in try me.runtimeClass!.createInstance() }
        let t = try target.createInstance()
        let fast = try makeClass("FwdBugLeakFwd")
        try fast.setForwardingTarget { _, _ in t.ref }
        let f = try fast.createInstance()
        fwdCollect()
        let before = Runtime.liveObjectCount
        try t.send("make", as: Void.self)
        XCTAssertEqual(Runtime.liveObjectCount, before, "direct send")
        try f.send("make", as: Void.self)
        XCTAssertEqual(Runtime.liveObjectCount, before, "forwarded send")
    }

    /// A dynamic send, which states no return type, receives a forwarded struct bigger than
    /// the 16 bytes of storage it starts with (MessageSend.forwardMiss, the forwarding spill
    /// buffer), rather than a signatureMismatch.
    func testDynamicSendForwardedToALargeStructReturnGetsTheValue() throws {
        let target = try makeClass("FwdBugBigStruct")
        try target.addMethod("frame") { (_: ObjectRef) in FwdRect(origin: Point(x: 1, y: 2), size: FwdSize(width: 3, height: 4)) }
        let t = try target.createInstance()
        let fast = try makeClass("FwdBugBigStructFwd")
        try fast.setForwardingTarget { _, _ in t.ref }
        let f = try fast.createInstance()
        XCTAssertEqual(try f.send("frame").structValue(as: FwdRect.self),
                       FwdRect(origin: Point(x: 1, y: 2), size: FwdSize(width: 3, height: 4)))
    }

    /// Regression (fixed, MessageReceiver.lookupStart is a requirement): asSuper(of:) sends
    /// started at the receiver's class, so a method calling super called itself.
    func testSuperSendStartsAtTheSuperclass() throws {
        let base = try makeClass("FwdBugSuperBase")
        try base.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        let sub = try makeClass("FwdBugSuperSub", superclass: base)
        let depth = Locked(0)
        try sub.addMethod("value:") { (me: ObjectRef, x: Int) -> Int in
            let d = depth.withLock { (v: inout Int) -> Int in
                v += 1
                return v
            }
            if d > 3 { throw FwdTestError(message: "super send came back to the subclass") }
            return try me.asSuper(of: sub).send("value:", x * 10) as Int + 1000
        }
        let s = try sub.createInstance()
        XCTAssertEqual(try s.send("value:", 1) as Int, 1011)
        // With both hooked, each hook runs once.
        nonisolated(unsafe) var log: [String] = []
        let tb = try base.hook("value:", .before) { _ in log.append("base") }
        let ts = try sub.hook("value:", .before) { _ in log.append("sub") }
        depth.set(0)
        XCTAssertEqual(try s.send("value:", 1) as Int, 1011)
        XCTAssertEqual(log, ["sub", "base"])
        tb.remove()
        ts.remove()
    }
}
