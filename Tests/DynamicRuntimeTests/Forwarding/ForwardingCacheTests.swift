// What a forwarded send learns is cached (the resolver's no in the class's cache, the
// caller's signature by its types, a declared signature by its interned text) and typed sends
// re-send to a forwarding target with their own types. None of it may outlive a change: a
// method added, replaced or hooked after a forwarded call takes effect on the next call.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class ForwardingCacheTests: XCTestCase {
    override func setUp() {
        super.setUp()
        sf_tramp_set_enabled(1)
    }

    private func target(_ name: String, _ body: @escaping @Sendable (Int, Int) -> Int) throws -> (cls: RuntimeClass, object: Object) {
        let cls = try makeClass(name)
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in body(a, b) }
        return (cls, try cls.createInstance())
    }

    func testForwardingTargetChangesAndMethodChangesTakeEffectOnTheNextCall() throws {
        let (firstClass, first) = try target("FCFirst") { $0 + $1 }
        let (_, second) = try target("FCSecond") { $0 * $1 }
        let current = Locked<ObjectRef>(first.ref)
        let forwarder = try makeClass("FCForwarder")
        try forwarder.setForwardingTarget { _, _ in current.withLock { $0 } }
        let f = try forwarder.createInstance()
        XCTAssertEqual(try f.send("add:to:", 3, 4) as Int, 7)
        XCTAssertEqual(try f.send("add:to:", 3, 4) as Int, 7)
        // Another target, of another class.
        current.set(second.ref)
        XCTAssertEqual(try f.send("add:to:", 3, 4) as Int, 12)
        current.set(first.ref)
        // The target's method replaced, then hooked.
        try firstClass.replaceMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a - b }
        XCTAssertEqual(try f.send("add:to:", 3, 4) as Int, -1)
        let token = try firstClass.hook("add:to:", .instead) { ctx in
            try ctx.proceed()
            let r: Int = try ctx.returnValue()
            try ctx.setReturnValue(r * 10)
        }
        XCTAssertEqual(try f.send("add:to:", 3, 4) as Int, -10)
        token.remove()
        XCTAssertEqual(try f.send("add:to:", 3, 4) as Int, -1)
        // The forwarder gets the method itself: no forwarding any more.
        try forwarder.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in 1000 + a + b }
        XCTAssertEqual(try f.send("add:to:", 3, 4) as Int, 1007)
        // A dynamic send (no types of its own) takes the same route.
        XCTAssertEqual(try f.send("add:to:", 1, 1).intValue, 1002)
    }

    func testAResolverAddedAfterForwardedCallsIsAsked() throws {
        let (_, t) = try target("FCResolveTarget") { $0 + $1 }
        let cls = try makeClass("FCResolve")
        try cls.setForwardingTarget { _, _ in t.ref }
        let o = try cls.createInstance()
        // The class has no resolver: the miss is cached as declined, and forwarded.
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        let asked = Locked(0)
        try cls.setResolveInstanceMethod { c, sel in
            asked.withLock { $0 += 1 }
            try c.addMethod(sel) { (_: ObjectRef, a: Int, b: Int) -> Int in -(a + b) }
            return true
        }
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, -3)
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, -3)
        XCTAssertEqual(asked.current, 1, "the resolver's method serves later calls")
    }

    func testForwardInvocationSeesEachCallersOwnSignature() throws {
        let cls = try makeClass("FCInvocation")
        let seen = Locked<[String]>([])
        try cls.setForwardInvocation { inv in
            seen.append(inv.signature.encoding)
            switch inv.signature.returnType {
            case .int64: try inv.setReturnValue(inv.argumentCount)
            case .double: try inv.setReturnValue(0.25)
            default: break
            }
        }
        let o = try cls.createInstance()
        for _ in 0..<2 {
            XCTAssertEqual(try o.send("m:", 1, 2) as Int, 2)
            XCTAssertEqual(try o.send("m:", Int32(1)) as Double, 0.25)
            XCTAssertEqual(try o.send("m:", 1, 2, 3) as Int, 3)
            try o.send("m:", UnsafeRawPointer(bitPattern: 16)!, as: Void.self)
            try o.send("m:", OpaquePointer(bitPattern: 16)!, as: Void.self)
        }
        let expected = ["q@:qq", "d@:i", "q@:qqq", "v@:^v", "v@:" + TypeEncoding.pointer(nil).encoding]
        XCTAssertEqual(seen.take(), expected + expected)
        // The class learns the method after all.
        try cls.addMethod("m:") { (_: ObjectRef, a: Int, b: Int) -> Int in a * 100 + b }
        XCTAssertEqual(try o.send("m:", 1, 2) as Int, 102)
        XCTAssertEqual(seen.take(), [])
    }

    func testProxiesFollowTheirTargetsMethodsAndSignatures() throws {
        let (tc, t) = try target("FCProxyTarget") { $0 + $1 }
        let other = try makeClass("FCProxyOther")
        try other.addMethod("add:to:") { (_: ObjectRef, a: Int32, b: Int32) -> Double in Double(a) / Double(b) }
        let o2 = try other.createInstance()
        let proxyClass = try makeProxyClass("FCProxy")
        let p = try Proxy.create(proxyClass, wrapping: t)
        XCTAssertEqual(try p.send("add:to:", 2, 3) as Int, 5)
        XCTAssertEqual(try p.send("add:to:", 2, 3) as Int, 5)
        try tc.replaceMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a * b }
        XCTAssertEqual(try p.send("add:to:", 2, 3) as Int, 6)
        let token = try tc.hook("add:to:", .instead) { ctx in
            try ctx.setArgument(10, at: 0)
            try ctx.proceed()
        }
        XCTAssertEqual(try p.send("add:to:", 2, 3) as Int, 30)
        token.remove()
        // Another target with another signature for the same selector: the proxy's declared
        // signature changes with it.
        let ivar = proxyClass.ivar(named: Proxy.targetIvarName)!
        try p.setValue(o2.ref, for: ivar)
        XCTAssertEqual(try p.send("add:to:", Int32(1), Int32(4)) as Double, 0.25)
        XCTAssertThrowsError(try p.send("add:to:", 1, 4) as Int) { e in
            XCTAssertTrue((e as? RuntimeError)?.isSignatureMismatch == true, "\(e)")
        }
    }

    func testAForwardingLoopThroughTypedResendsIsStopped() throws {
        let a = try makeClass("FCLoopA")
        let b = try makeClass("FCLoopB")
        let objects = Locked<[ObjectRef]>([])
        try a.setForwardingTarget { _, _ in objects.withLock { $0[1] } }
        try b.setForwardingTarget { _, _ in objects.withLock { $0[0] } }
        let x = try a.createInstance(), y = try b.createInstance()
        objects.set([x.ref, y.ref])
        XCTAssertThrowsError(try x.send("add:to:", 1, 2) as Int) { e in
            XCTAssertTrue((e as? RuntimeError)?.isForwardingFailed == true, "\(e)")
        }
        XCTAssertEqual(sf_forward_depth_enter(), 1, "every level was left")
        sf_forward_depth_exit()
    }

    func testTheSignatureCacheNamesTypesExactly() throws {
        // long and long long share a key code; the cache must not hand one for the other.
        let q = try MessageSend.frameSignature(returning: .int64, [.int64])
        let l = try MessageSend.frameSignature(returning: .long, [.long])
        XCTAssertEqual(q.encoding, "q@:q")
        XCTAssertEqual(l.encoding, "l@:l")
        XCTAssertEqual(try MessageSend.frameSignature(returning: .int64, [.int64]), q)
        XCTAssertEqual(try MessageSend.frameSignature(returning: .long, [.long]).encoding, "l@:l")
        XCTAssertEqual(try MessageSend.frameSignature(returning: .void, [.pointer(.int32)]).encoding, "v@:^i")
        XCTAssertEqual(try MessageSend.frameSignature(returning: .void, [.pointer(.void)]).encoding, "v@:^v")
    }
}
