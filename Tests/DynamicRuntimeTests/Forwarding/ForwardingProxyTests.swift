// NSProxy-style proxies (Proxy.makeClass / Proxy.create).
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class ForwardingProxyTests: LiveObjectTestCase {
    /// A target with methods of several shapes and a call log.
    func makeTarget(log: Locked<[String]>) throws -> RuntimeClass {
        let cls = try makeClass("FwdProxyTarget", ivars: [("child", .object), ("total", .int64)])
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in
            log.withLock { $0.append("add \(a) \(b)") }
            return a + b
        }
        try cls.addMethod("accumulate:") { (me: ObjectRef, x: Int) in
            log.withLock { $0.append("accumulate \(x)") }
            try me.setValue(try me.value(ofIvar: "total", as: Int.self) + x, forIvar: "total")
        }
        try cls.addMethod("total") { (me: ObjectRef) -> Int in try me.value(ofIvar: "total", as: Int.self) }
        try cls.addMethod("half:") { (_: ObjectRef, x: Double) in x / 2 }
        try cls.addMethod("child") { (me: ObjectRef) -> Object? in try me.value(ofIvar: "child", as: Object?.self) }
        try cls.addMethod("makeChild") { (me: ObjectRef) -> Object? in try me.runtimeClass!.createInstance() }
        try cls.addMethod("offset:by:") { (_: ObjectRef, r: FwdRect, d: Double) in
            FwdRect(origin: Point(x: r.origin.x + d, y: r.origin.y + d), size: r.size)
        }
        try cls.addMethod("name") { (me: ObjectRef) -> CString in fwdStaticCString(me.runtimeClass!.name) }
        return cls
    }

    func testProxyForwardsEveryMessageToItsTarget() throws {
        let log = Locked<[String]>([])
        let target = try makeTarget(log: log)
        let t = try target.createInstance()
        let proxyClass = try makeProxyClass("FwdProxy")
        let p = try Proxy.create(proxyClass, wrapping: t)

        XCTAssertEqual(p.runtimeClass, proxyClass)
        XCTAssertFalse(p.responds(to: "add:to:"), "the proxy itself implements nothing")
        XCTAssertEqual(try p.send("add:to:", 2, 3) as Int, 5)
        try p.send("accumulate:", 10, as: Void.self)
        try p.send("accumulate:", 5, as: Void.self)
        XCTAssertEqual(try p.send("total") as Int, 15)
        XCTAssertEqual(try t.send("total") as Int, 15, "side effects land on the target")
        XCTAssertEqual(try p.send("half:", 5.0) as Double, 2.5)
        let r = FwdRect(origin: Point(x: 1, y: 2), size: FwdSize(width: 3, height: 4))
        XCTAssertEqual(try p.send("offset:by:", r, 0.5) as FwdRect,
                       FwdRect(origin: Point(x: 1.5, y: 2.5), size: FwdSize(width: 3, height: 4)))
        XCTAssertEqual((try p.send("name") as CString).string, target.name)
        XCTAssertEqual(log.current, ["add 2 3", "accumulate 10", "accumulate 5"])

        // Unknown to the target too: the sender gets doesNotRecognizeSelector, not a crash.
        XCTAssertTrue(thrownError { try p.send("fly") as Int }?.isDoesNotRecognize ?? false)
    }

    func testProxyObjectReturnsAndLifetimes() throws {
        let log = Locked<[String]>([])
        let target = try makeTarget(log: log)
        var t: Object? = try target.createInstance()
        let child = try target.createInstance()
        try t!.setValue(child.ref, forIvar: "child")
        let proxyClass = try makeProxyClass("FwdProxyObj")
        var p: Object? = try Proxy.create(proxyClass, wrapping: t!)
        XCTAssertEqual(t!.retainCount, 2, "the proxy retains its target")

        XCTAssertEqual(child.retainCount, 2)
        do {
            let c: Object? = try p!.send("child")
            XCTAssertEqual(c?.raw, child.raw)
            XCTAssertEqual(child.retainCount, 3)
        }
        XCTAssertEqual(child.retainCount, 2)

        // A fresh object made by the target: the caller owns the only reference.
        do {
            let made: Object? = try p!.send("makeChild")
            XCTAssertEqual(made?.retainCount, 1)
            XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 4)
        }
        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 3)
        do {
            let made = try p!.send("makeChild")
            XCTAssertEqual(made.objectValue?.retainCount, 1)
        }
        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 3)

        // The proxy keeps the target alive; dropping the proxy releases it.
        let weakTarget = try WeakReference(t!)
        t = nil
        XCTAssertNotNil(weakTarget.object)
        XCTAssertEqual(try p!.send("add:to:", 1, 1) as Int, 2)
        p = nil
        XCTAssertNil(weakTarget.object)
        XCTAssertEqual(child.retainCount, 1)
        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 1)
    }

    func testProxyInterception() throws {
        let log = Locked<[String]>([])
        let target = try makeTarget(log: log)
        let t = try target.createInstance()
        let seen = Locked<[String]>([])
        let proxyClass = try makeProxyClass("FwdProxyIntercept") { inv, proceed in
            seen.withLock { $0.append(inv.selector.name) }
            switch inv.selector.name {
            case "add:to:":
                // Change an argument, then the result.
                try inv.setArgument(try inv.argument(at: 1, as: Int.self) * 10, at: 1)
                try proceed()
                try inv.setReturnValue(try inv.returnValue(as: Int.self) + 1)
            case "accumulate:":
                // Drop the call.
                break
            case "half:":
                // Answer without the target.
                try inv.setReturnValue(-1.0)
            default:
                try proceed()
            }
        }
        let p = try Proxy.create(proxyClass, wrapping: t)
        XCTAssertEqual(try p.send("add:to:", 1, 2) as Int, 22)
        try p.send("accumulate:", 7, as: Void.self)
        XCTAssertEqual(try p.send("total") as Int, 0, "the dropped call never reached the target")
        XCTAssertEqual(try p.send("half:", 8.0) as Double, -1.0)
        XCTAssertEqual(seen.current, ["add:to:", "accumulate:", "total", "half:"])
        XCTAssertEqual(log.current, ["add 1 20"])
    }

    func testProxyFromC() throws {
        let log = Locked<[String]>([])
        let target = try makeTarget(log: log)
        let t = try target.createInstance()
        let proxyClass = try makeProxyClass("FwdProxyC")
        let p = try Proxy.create(proxyClass, wrapping: t)
        let args = FwdCArgs()
        args.add(Int64(30))
        args.add(Int64(12))
        var ret: Int64 = 0
        XCTAssertEqual(args.send(p.raw, "add:to:", &ret), SF_OK)
        XCTAssertEqual(ret, 42)
        let d = FwdCArgs()
        d.add(Double(9))
        var dret: Double = 0
        XCTAssertEqual(d.send(p.raw, "half:", &dret), SF_OK)
        XCTAssertEqual(dret, 4.5)
        // The target does not know it: methodSignatureForSelector: has nothing to say.
        XCTAssertEqual(args.send(p.raw, "nothing:at:", &ret), SF_ERR_FORWARDING)
    }

    func testProxyOfAProxyAndProxyErrors() throws {
        let log = Locked<[String]>([])
        let target = try makeTarget(log: log)
        let t = try target.createInstance()
        let inner = try makeProxyClass("FwdProxyInner")
        let outer = try makeProxyClass("FwdProxyOuter")
        let p1 = try Proxy.create(inner, wrapping: t)
        let p2 = try Proxy.create(outer, wrapping: p1)
        XCTAssertEqual(try p2.send("add:to:", 4, 4) as Int, 8)

        let notAProxy = try makeClass("FwdNotAProxy")
        XCTAssertTrue(thrownError { try Proxy.create(notAProxy, wrapping: t) }?.isInvalidArgument ?? false)
        XCTAssertEqual(thrownError { try Proxy.makeClass(name: inner.name) }, .duplicateClass(.init(className: inner.name)))

        // An interceptor that throws: the sender gets the error, the proxy keeps working.
        let failing = try makeProxyClass("FwdProxyFails") { inv, proceed in
            if inv.selector.name == "half:" { throw FwdTestError(message: "half refused") }
            try proceed()
        }
        let p3 = try Proxy.create(failing, wrapping: t)
        XCTAssertTrue(thrownError { try p3.send("half:", 2.0) as Double }?.isImplementationFailed ?? false)
        XCTAssertEqual(try p3.send("add:to:", 1, 2) as Int, 3)
    }

    func testDynamicSendThroughProxy() throws {
        // A dynamic send does not state a return type; fast forwarding (`call`) accepts that,
        // the proxy path should too.
        let log = Locked<[String]>([])
        let target = try makeTarget(log: log)
        let t = try target.createInstance()
        let proxyClass = try makeProxyClass("FwdProxyDyn")
        let p = try Proxy.create(proxyClass, wrapping: t)
        XCTAssertEqual(try p.send("add:to:", 2, 3).intValue, 5)
        XCTAssertEqual(try p.send("half:", 3.0).doubleValue, 1.5)
        let c = try p.send("makeChild")
        XCTAssertEqual(c.objectValue?.retainCount, 1)
    }
}
