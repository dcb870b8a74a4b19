import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// Extra bytes at allocation with object_getIndexedIvars (objc4 test/classgetclass.m's
/// extraBytes, libobjc2 Test/ExtraBytes) and method_invoke (objc4 test/methodArgs.m).
final class IndexedIvarsAndInvokeTests: XCTestCase {
    func testIndexedIvarsFollowTheIvarsAlignedAndZeroed() throws {
        let odd = try RuntimeClass(name: uniqueClassName("IIOdd"), ivars: [("c", .int8)])
        let o = try odd.createInstance(extraBytes: 100)
        let p = try XCTUnwrap(o.indexedIvars)
        let base = UInt(bitPattern: UnsafeRawPointer(o.raw))
        let start = UInt(bitPattern: UnsafeRawPointer(p))
        XCTAssertGreaterThanOrEqual(Int(start - base), odd.instanceSize, "after the ivars")
        XCTAssertEqual(start % 16, 0, "aligned for any scalar, long double included")
        XCTAssertEqual(Int(start - base), odd.indexedIvarsOffset)
        XCTAssertTrue(UnsafeRawBufferPointer(start: p, count: 100).allSatisfy { $0 == 0 })
        p.storeBytes(of: 0x0102_0304_0506_0708 as UInt64, toByteOffset: 92, as: UInt64.self)  // the last 8 bytes are ours
        XCTAssertGreaterThanOrEqual(sf_object_allocated_size(o.raw), odd.indexedIvarsOffset + 100)
        XCTAssertEqual(try o.value(ofIvar: "c", as: Int8.self), 0, "the ivar is untouched")
    }

    func testAnOverAlignedIvarRaisesTheIndexedIvarsAlignment() throws {
        let cls = try RuntimeClass.allocate(name: uniqueClassName("IIAligned"))
        try cls.addIvar("v", type: .int64, alignment: 64)
        cls.register()
        let o = try cls.createInstance(extraBytes: 8)
        let p = UInt(bitPattern: try XCTUnwrap(o.indexedIvars))
        XCTAssertEqual(p % 64, 0)
        XCTAssertEqual(sf_object_getIndexedIvars(o.raw), o.indexedIvars)
    }

    func testBadExtraBytes() throws {
        let cls = try RuntimeClass(name: uniqueClassName("IIBad"))
        XCTAssertThrowsError(try cls.createInstance(extraBytes: -1))
        XCTAssertThrowsError(try cls.createInstance(extraBytes: RuntimeClass.maximumExtraBytes + 1))
        XCTAssertNil(sf_class_createInstanceWithExtraBytes(cls.raw, Int.max))
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        XCTAssertNil(sf_class_createInstanceWithExtraBytes(cls.metaclass.raw, 8))
        XCTAssertNil(sf_object_getIndexedIvars(nil))
        XCTAssertNil(sf_object_getIndexedIvars(sf_class_as_object(cls.raw)), "class objects have none")
        let raw = try XCTUnwrap(sf_class_createInstanceWithExtraBytes(cls.raw, 32))
        XCTAssertEqual(sf_object_retainCount(raw), 1)
        XCTAssertNotNil(sf_object_getIndexedIvars(raw))
        sf_release(raw)
    }

    func testMethodInvokeCallsThatImplementationWithoutLookup() throws {
        let base = try RuntimeClass(name: uniqueClassName("MIBase"))
        let m = try base.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        let sub = try RuntimeClass(name: uniqueClassName("MISub"), superclass: base)
        try sub.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a * b }
        let o = try sub.createInstance()
        XCTAssertEqual(try o.send("add:to:", 3, 4) as Int, 12, "a send finds the override")
        XCTAssertEqual(try m.invoke(on: o, 3, 4).intValue, 7, "invoke runs the method it was given")
        let cm = try base.metaclass.addMethod("answer") { (_: ObjectRef) -> Int in 42 }
        XCTAssertEqual(try cm.invoke(on: sub).intValue, 42, "a class method on a subclass object")
        // C: the same call through sf_method_invoke.
        var a = 5, b = 6, r = 0
        try withUnsafeMutablePointer(to: &a) { pa in
            try withUnsafeMutablePointer(to: &b) { pb in
                var args: [UnsafeMutableRawPointer?] = [UnsafeMutableRawPointer(pa), UnsafeMutableRawPointer(pb)]
                XCTAssertEqual(sf_method_invoke(m.raw, o.raw, &r, &args), SF_OK)
                XCTAssertEqual(r, 11)
                XCTAssertEqual(sf_method_invoke(m.raw, o.raw, &r, nil), SF_ERR_INVALID_ARGUMENT, "args missing")
                _ = try XCTUnwrap(Optional(args))
            }
        }
    }

    func testMethodInvokeRefusesForeignReceiversAndBadArguments() throws {
        let owner = try RuntimeClass(name: uniqueClassName("MIOwner"), ivars: [("n", .int64)])
        let m = try owner.addMethod("n") { (me: ObjectRef) -> Int in try me.value(ofIvar: "n") }
        let stranger = try RuntimeClass(name: uniqueClassName("MIStranger")).createInstance()
        XCTAssertThrowsError(try m.invoke(on: stranger)) { error in
            guard case let .invalidArgument(context)? = error as? RuntimeError else { return XCTFail("\(error)") }
            XCTAssertEqual(context.className, owner.name)
            XCTAssertEqual(context.selector, "n")
            XCTAssertEqual(context.expected, "a receiver of '\(owner.name)' or a subclass")
            XCTAssertTrue(context.actual?.contains("MIStranger") ?? false, "\(error)")
        }
        XCTAssertThrowsError(try m.invoke(on: ObjectRef.nil))
        XCTAssertThrowsError(try m.invoke(on: owner.createInstance(), 1), "too many arguments")
        var r = 0
        XCTAssertEqual(sf_method_invoke(m.raw, stranger.raw, &r, nil), SF_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(sf_method_invoke(nil, stranger.raw, &r, nil), SF_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(sf_method_invoke(m.raw, nil, &r, nil), SF_ERR_INVALID_ARGUMENT)
        let instance = try owner.createInstance()
        try instance.setValue(9, forIvar: "n")
        XCTAssertEqual(sf_method_invoke(m.raw, instance.raw, &r, nil), SF_OK)
        XCTAssertEqual(r, 9)
    }
}
