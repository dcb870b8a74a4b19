// Each forwarding stage overridden by defining the method under
// its Objective-C name — with Swift closures and with C functions using only the C API —
// rather than through the setResolveInstanceMethod/setForwardingTarget/… helpers.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

nonisolated(unsafe) private var cResolverCalls = 0
nonisolated(unsafe) private var cUnrecognized: [String] = []
nonisolated(unsafe) private var cForwardingTarget: sf_id?

final class ForwardingDefinedStagesTests: XCTestCase {
    func testStagesDefinedAsCFunctions() throws {
        // +resolveInstanceMethod: in C: adds a C IMP with sf_class_addMethod and says YES.
        let resolver: @convention(c) (sf_id?, sf_sel?, sf_sel?) -> Bool = { clsObject, _, sel in
            cResolverCalls += 1
            guard let sel, String(cString: sf_sel_getName(sel)) == "fortyTwo" else { return false }
            let imp: @convention(c) (sf_id?, sf_sel?) -> Int64 = { _, _ in 42 }
            return sf_class_addMethod(sf_object_as_class(clsObject), sel, unsafeBitCast(imp, to: sf_imp.self), "q@:") == SF_OK
        }
        // -forwardingTargetForSelector: in C: returns a +1 reference, as every object return does.
        let target: @convention(c) (sf_id?, sf_sel?, sf_sel?) -> sf_id? = { _, _, sel in
            guard let sel, String(cString: sf_sel_getName(sel)) == "add:to:" else { return nil }
            return sf_retain(cForwardingTarget)
        }
        // -doesNotRecognizeSelector: in C.
        let unrecognized: @convention(c) (sf_id?, sf_sel?, sf_sel?) -> Void = { _, _, sel in
            cUnrecognized.append(sel.map { String(cString: sf_sel_getName($0)) } ?? "NULL")
        }
        let helper = try makeClass("FwdCStageTarget")
        try helper.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let t = try helper.createInstance()
        cForwardingTarget = t.raw
        defer { cForwardingTarget = nil }

        let cls = try makeClass("FwdCStages")
        XCTAssertEqual(sf_class_addMethod(cls.metaclass.raw, Selector("resolveInstanceMethod:").raw,
                                          unsafeBitCast(resolver, to: sf_imp.self), "B@::"), SF_OK)
        XCTAssertEqual(sf_class_addMethod(cls.raw, Selector("forwardingTargetForSelector:").raw,
                                          unsafeBitCast(target, to: sf_imp.self), "@@::"), SF_OK)
        XCTAssertEqual(sf_class_addMethod(cls.raw, Selector("doesNotRecognizeSelector:").raw,
                                          unsafeBitCast(unrecognized, to: sf_imp.self), "v@::"), SF_OK)
        let o = try cls.createInstance()
        cResolverCalls = 0
        cUnrecognized = []

        XCTAssertEqual(try o.send("fortyTwo") as Int, 42)
        XCTAssertEqual(try o.send("fortyTwo") as Int, 42)
        XCTAssertEqual(cResolverCalls, 1)
        XCTAssertEqual(try o.send("add:to:", 40, 2) as Int, 42)
        XCTAssertEqual(t.retainCount, 1, "the +1 from the C forwarding target is balanced")
        XCTAssertEqual(thrownError { try o.send("nothing") as Int },
                       .doesNotRecognizeSelector(.init(className: cls.name, selector: "nothing", isClassMethod: false)))
        XCTAssertEqual(cUnrecognized, ["nothing"])

        // The same from C.
        let args = FwdCArgs()
        args.add(Int64(1))
        args.add(Int64(2))
        var ret: Int64 = 0
        XCTAssertEqual(args.send(o.raw, "add:to:", &ret), SF_OK)
        XCTAssertEqual(ret, 3)
        XCTAssertEqual(sf_msg_send(o.raw, Selector("stillNothing").raw, &ret, nil), SF_ERR_UNRECOGNIZED_SELECTOR)
        XCTAssertEqual(cUnrecognized, ["nothing", "stillNothing"])
        XCTAssertEqual(t.retainCount, 1)
    }

    func testStagesDefinedAsSwiftMethodsByName() throws {
        let helper = try makeClass("FwdNamedTarget")
        try helper.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let t = try helper.createInstance()
        let cls = try makeClass("FwdNamedStages")
        try cls.metaclass.addMethod("resolveInstanceMethod:") { (clsObject: ObjectRef, sel: Selector) -> Bool in
            guard sel.name == "seven" else { return false }
            try RuntimeClass.from(sf_object_as_class(clsObject.raw!)).addMethod(sel) { (_: ObjectRef) -> Int in 7 }
            return true
        }
        try cls.addMethod("forwardingTargetForSelector:") { (_: ObjectRef, sel: Selector) -> Object? in
            sel.name == "add:to:" ? t : nil
        }
        try cls.addMethod("methodSignatureForSelector:") { (_: ObjectRef, sel: Selector) -> CString in
            sel.name == "double:" ? fwdStaticCString("q@:q") : CString(nil)
        }
        try cls.addMethod("forwardInvocation:") { (_: ObjectRef, record: UnsafeMutableRawPointer) in
            let inv = Invocation(storage: Unmanaged<InvocationStorage>.fromOpaque(record).takeUnretainedValue())
            try inv.setReturnValue(try inv.argument(at: 0, as: Int.self) * 2)
        }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("seven") as Int, 7)
        XCTAssertEqual(try o.send("add:to:", 3, 4) as Int, 7)
        XCTAssertEqual(try o.send("double:", 21) as Int, 42)
        let args = FwdCArgs()
        args.add(Int64(50))
        var ret: Int64 = 0
        XCTAssertEqual(args.send(o.raw, "double:", &ret), SF_OK, "C senders get the declared signature")
        XCTAssertEqual(ret, 100)
        XCTAssertEqual(t.retainCount, 1)
    }

    func testResolverOfAnObjectWithAPerObjectHookSeesItsVisibleClass() throws {
        let cls = try makeClass("FwdResolveHidden")
        try cls.addMethod("plain") { (_: ObjectRef) -> Int in 1 }
        let seen = Locked<[String]>([])
        try cls.setResolveInstanceMethod { c, sel in
            seen.withLock { $0.append(c.name) }
            try c.addMethod(sel) { (_: ObjectRef) -> Int in 5 }
            return true
        }
        let hooked = try cls.createInstance()
        let other = try cls.createInstance()
        let token = try hooked.hook("plain", .before) { _ in }
        XCTAssertEqual(try hooked.send("resolved") as Int, 5)
        XCTAssertEqual(seen.current, [cls.name], "the resolver is asked about the object's class, not its private subclass")
        XCTAssertEqual(try other.send("resolved") as Int, 5, "so the method it adds serves every instance")
        XCTAssertEqual(seen.current.count, 1)
        token.remove()
    }
}
