// Regression tests for forwarding-related bugs found outside the forwarding files (CShims,
// MessageSend, CAPI, Object). All are fixed; each test reproduces the original failure.
import CShims
import XCTest
@testable import DynamicRuntime

final class ForwardingKnownBugTests: XCTestCase {
    /// Regression (fixed, cache.c): `sf_empty_cache` had no bucket of its own, so the first
    /// probe of a fresh class read a neighbouring global as bucket 0 and could spin forever
    /// while a grown cache waited in the retired list.
    func testProbeOfAFreshClassAfterCacheGrowth() throws {
        let big = try RuntimeClass(name: uniqueClassName("FwdBugBigCache"))
        for i in 0..<12 {
            try big.addMethod(Selector("m\(i)")) { (_: ObjectRef) -> Int in i }
        }
        let o = try big.createInstance()
        for i in 0..<12 { XCTAssertEqual(try o.send(Selector("m\(i)")) as Int, i) }  // grows and retires
        let fresh = try RuntimeClass(name: uniqueClassName("FwdBugFresh"))  // not warmed
        try fresh.addMethod("one") { (_: ObjectRef) -> Int in 1 }
        let f = try fresh.createInstance()
        XCTAssertEqual(try f.send("one") as Int, 1)  // hangs today
    }

    /// Regression (fixed, CAPI.swift): sf_msg_send(NULL, …) returned SF_ERR_NIL_RECEIVER but
    /// recorded SF_ERR_INVALID_ARGUMENT for sf_last_error().
    func testNilReceiverLastErrorMatchesTheReturnedStatus() throws {
        var ret: Int64 = 0
        XCTAssertEqual(sf_msg_send(nil, Selector("anything").raw, &ret, nil), SF_ERR_NIL_RECEIVER)
        XCTAssertEqual(sf_last_error(), SF_ERR_NIL_RECEIVER)
    }

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

    /// Regression (fixed, MessageSend.forwardMiss / Forwarding spill buffer): a dynamic send,
    /// which states no return type, could not receive a forwarded struct bigger than the 16
    /// bytes of storage it starts with (it was refused with signatureMismatch).
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
        var log: [String] = []
        let tb = try base.hook("value:", .before) { _ in log.append("base") }
        let ts = try sub.hook("value:", .before) { _ in log.append("sub") }
        depth.set(0)
        XCTAssertEqual(try s.send("value:", 1) as Int, 1011)
        XCTAssertEqual(log, ["sub", "base"])
        tb.remove()
        ts.remove()
    }
}
