import TestSupport
import XCTest
@testable import DynamicRuntime

final class ForwardingSmokeTests: XCTestCase {
    func testStages() throws {
        let target = try RuntimeClass(name: "FSTarget")
        try target.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let t = try target.createInstance()

        // Resolve.
        let lazy = try RuntimeClass(name: "FSLazy")
        try lazy.setResolveInstanceMethod { cls, sel in
            guard sel.name == "answer" else { return false }
            try cls.addMethod(sel) { (_: ObjectRef) in 42 }
            return true
        }
        let l = try lazy.createInstance()
        XCTAssertEqual(try l.send("answer") as Int, 42)
        XCTAssertEqual(try l.send("answer") as Int, 42)

        // Fast forwarding.
        let fwd = try RuntimeClass(name: "FSForwarder", ivars: [("other", .object)])
        try fwd.setForwardingTarget { recv, _ in try recv.value(ofIvar: "other", as: ObjectRef.self) }
        let f = try fwd.createInstance()
        try f.setValue(t.ref, forIvar: "other")
        XCTAssertEqual(try f.send("add:to:", 2, 3) as Int, 5)
        XCTAssertEqual(try f.send("add:to:", 2, 3).intValue, 5)

        // Proxy with forwardInvocation.
        nonisolated(unsafe) var seen: [String] = []
        let proxyClass = try Proxy.makeClass(name: "FSProxy") { inv, proceed in
            seen.append(inv.selector.name)
            if inv.argumentCount == 2 { try inv.setArgument(10, at: 0) }
            try proceed()
        }
        let p = try Proxy.create(proxyClass, wrapping: t)
        XCTAssertEqual(try p.send("add:to:", 1, 2) as Int, 12)
        XCTAssertEqual(seen, ["add:to:"])
        XCTAssertThrowsError(try p.send("nothing")) { e in
            guard case .doesNotRecognizeSelector? = e as? RuntimeError else { return XCTFail("\(e)") }
        }
    }

    func testHooks() throws {
        let cls = try RuntimeClass(name: "HSCalc")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let originalIMP = cls.ownMethod(for: "add:to:")!.implementation
        let a = try cls.createInstance()
        let b = try cls.createInstance()
        nonisolated(unsafe) var log: [String] = []
        let t1 = try cls.hook("add:to:", .before) { ctx in log.append("before \(try ctx.argument(at: 0, as: Int.self))") }
        let t2 = try cls.hook("add:to:", .after) { ctx in
            log.append("after \(try ctx.returnValue(as: Int.self))")
            try ctx.setReturnValue(try ctx.returnValue(as: Int.self) * 100)
        }
        XCTAssertEqual(try a.send("add:to:", 1, 2) as Int, 300)
        XCTAssertEqual(log, ["before 1", "after 3"])
        t1.remove(); t2.remove()
        XCTAssertEqual(cls.ownMethod(for: "add:to:")!.implementation, originalIMP)
        XCTAssertEqual(try a.send("add:to:", 1, 2) as Int, 3)

        // Per instance.
        let t3 = try a.hook("add:to:", .instead) { ctx in try ctx.setReturnValue(-1) }
        XCTAssertEqual(try a.send("add:to:", 1, 2) as Int, -1)
        XCTAssertEqual(try b.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(a.runtimeClass, cls)
        t3.remove()
        XCTAssertEqual(try a.send("add:to:", 1, 2) as Int, 3)

        // Capture and replay later.
        nonisolated(unsafe) var kept: Invocation?
        let t4 = try cls.hook("add:to:", .instead) { ctx in kept = ctx.makeInvocation() }
        XCTAssertEqual(try a.send("add:to:", 5, 6) as Int, 0)
        t4.remove()
        try kept!.invoke()
        XCTAssertEqual(try kept!.returnValue(as: Int.self), 11)
    }
}
