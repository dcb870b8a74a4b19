import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// object_setClass (isa swizzling) and its safety checks (objc4 test/setClass?, libobjc2
/// Test/objc_msgSend isa changes): KVO-style subclasses work, anything that could read past the
/// object or release a non-object is refused with `incompatibleClass`.
final class SetClassTests: XCTestCase {
    func testSwizzlingToASubclassAndBack() throws {
        let base = try RuntimeClass(name: "SCBase", ivars: [("value", .int64), ("child", .object)])
        try base.addMethod("value") { (me: ObjectRef) -> Int in try me.value(ofIvar: "value") }
        let observer = try RuntimeClass(name: "SCBase_Observed", superclass: base)
        try observer.addMethod("value") { (me: ObjectRef) -> Int in
            let original: Int = try me.asSuper(of: observer).send("value")
            return original + 1000
        }
        let o = try base.createInstance()
        try o.setValue(7, forIvar: "value")
        let child = try base.createInstance()
        try o.setValue(child.ref, forIvar: "child")
        XCTAssertEqual(try o.setClass(observer), base)
        XCTAssertEqual(o.runtimeClass, observer)
        XCTAssertEqual(try o.send("value") as Int, 1007)
        XCTAssertThrowsError(try observer.dispose(), "the swizzled instance counts as the new class's")
        XCTAssertEqual(try o.setClass(base), observer)
        XCTAssertEqual(try o.send("value") as Int, 7)
        XCTAssertNoThrow(try observer.dispose())
    }

    func testAnUnrelatedLargerClassIsRefused() throws {
        let small = try RuntimeClass(name: "SCSmall", ivars: [("a", .int32)])
        let large = try RuntimeClass(name: "SCLarge", ivars: [("a", .int64), ("b", .int64), ("c", .int64), ("d", .int64),
                                                            ("e", .int64), ("f", .int64), ("g", .int64), ("h", .int64)])
        let o = try small.createInstance()
        XCTAssertThrowsError(try o.setClass(large)) { error in
            guard case let .incompatibleClass(context)? = error as? RuntimeError else { return XCTFail("\(error)") }
            XCTAssertEqual(context.className, "SCSmall")
            XCTAssertEqual(context.target, "SCLarge")
            XCTAssertTrue(context.reason?.contains("bytes") ?? false, "\(error)")
        }
        XCTAssertEqual(o.runtimeClass, small, "nothing changed")
        XCTAssertNil(sf_object_setClass(o.raw, large.raw))
        XCTAssertEqual(sf_last_error(), SF_ERR_INCOMPATIBLE_CLASS)
    }

    func testStrongSlotsMustLineUp() throws {
        let objects = try RuntimeClass(name: "SCObjects", ivars: [("o", .object)])
        let scalars = try RuntimeClass(name: "SCScalars", ivars: [("n", .int64)])
        let o = try scalars.createInstance()
        try o.setValue(0x1234, forIvar: "n")
        XCTAssertThrowsError(try o.setClass(objects), "dealloc would release 0x1234 as an object")
        let p = try objects.createInstance()
        XCTAssertThrowsError(try p.setClass(scalars), "the object ivar would never be released")
    }

    func testBadTargets() throws {
        let cls = try RuntimeClass(name: "SCTargets")
        try cls.addMethod("x") { (_: ObjectRef) -> Int in 1 }
        let o = try cls.createInstance()
        XCTAssertThrowsError(try o.setClass(cls.metaclass))
        XCTAssertThrowsError(try cls.setClass(try RuntimeClass(name: "SCOther")), "a class object")
        XCTAssertThrowsError(try o.setClass(try RuntimeClass.allocate(name: "SCUnregistered")))
        let token = try o.hook("x", .after) { _ in }
        XCTAssertThrowsError(try o.setClass(try RuntimeClass(name: "SCHookedTarget"))) {
            guard case .incompatibleClass? = $0 as? RuntimeError else { return XCTFail("\($0)") }
        }
        token.remove()
        XCTAssertNil(sf_object_setClass(nil, cls.raw))
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
    }
}
