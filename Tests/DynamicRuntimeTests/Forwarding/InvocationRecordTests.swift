// Invocation records — typed access to every argument type,
// wrong types and indexes, return values. Invoking, retaining and replaying:
// InvocationReplayTests.
import TestSupport
import CDynamicRuntime
import Foundation
import Glibc
import XCTest
@testable import DynamicRuntime

final class InvocationRecordTests: InvocationRecordTestCase {
    func testTypedGetAndSetOfEveryArgumentType() throws {
        let seen = Locked<[String]>([])
        let cls = try makeRecorder(seen)
        let o = try cls.createInstance()
        let v = Values(other: try cls.createInstance(), cls: cls)
        let inv = Invocation(signature: try Signature(Self.allTypes), target: o, selector: "all")
        XCTAssertEqual(inv.argumentCount, 18)
        XCTAssertEqual(inv.signature.encoding, Self.allTypes)
        XCTAssertEqual(inv.target.raw, o.raw)
        XCTAssertEqual(inv.selector, Selector("all"))
        try fill(inv, v)

        XCTAssertEqual(try inv.argument(at: 0, as: Int8.self), Int8.min)
        XCTAssertEqual(try inv.argument(at: 1, as: UInt8.self), UInt8.max)
        XCTAssertEqual(try inv.argument(at: 2, as: Int16.self), Int16.min)
        XCTAssertEqual(try inv.argument(at: 3, as: UInt16.self), UInt16.max)
        XCTAssertEqual(try inv.argument(at: 4, as: Int32.self), Int32.min)
        XCTAssertEqual(try inv.argument(at: 5, as: UInt32.self), UInt32.max)
        XCTAssertEqual(try inv.argument(at: 6, as: Int.self), Int.min)
        XCTAssertEqual(try inv.argument(at: 6, as: Int64.self), Int64.min)
        XCTAssertEqual(try inv.argument(at: 7, as: UInt64.self), UInt64.max)
        XCTAssertEqual(try inv.argument(at: 8, as: Float.self), -0.5)
        XCTAssertEqual(try inv.argument(at: 9, as: Double.self), Double.pi)
        XCTAssertEqual(try inv.argument(at: 10, as: Bool.self), true)
        XCTAssertEqual(try inv.argument(at: 11, as: CString.self).string, "text")
        XCTAssertEqual(try inv.argument(at: 12, as: ObjectRef.self).raw, v.other.raw)
        XCTAssertEqual(try inv.argument(at: 12, as: Object?.self)?.raw, v.other.raw)
        XCTAssertEqual(try inv.argument(at: 13, as: ClassRef.self).runtimeClass, cls)
        XCTAssertEqual(try inv.argument(at: 14, as: Selector.self).name, "some:selector:")
        XCTAssertEqual(try inv.argument(at: 15, as: UnsafeRawPointer.self), v.pointer)
        XCTAssertEqual(try inv.argument(at: 16, as: Point.self), v.point)
        XCTAssertEqual(try inv.argument(at: 17, as: FwdRect.self), v.rect)
        XCTAssertEqual(v.other.retainCount, 1, "reading an object argument as Object? is balanced")

        // Dynamic values, and setting through them.
        XCTAssertEqual(try inv.argumentValue(at: 4).intValue, Int(Int32.min))
        XCTAssertEqual(inv.argumentValues.count, 18)
        try inv.setArgument(DynamicValue.int32(77), at: 4)
        XCTAssertEqual(try inv.argument(at: 4, as: Int32.self), 77)
        try inv.setArgument(Int32.min, at: 4)

        // The method receives exactly these values.
        try inv.invoke()
        XCTAssertEqual(seen.current.count, 1)
        XCTAssertEqual(seen.current.first, inv.argumentValues.map(fwdFingerprint).joined(separator: " "))
        XCTAssertTrue(inv.description.contains("all"), inv.description)
    }

    func testWrongTypesAndIndexesAreErrors() throws {
        let cls = try makeClass("InvChecks")
        let o = try cls.createInstance()
        let inv = Invocation(signature: try Signature("q@:cfd@"), target: o, selector: "x:y:z:w:")
        XCTAssertTrue(thrownError { try inv.setArgument(UInt8(1), at: 0) }?.isSignatureMismatch ?? false, "c is not C")
        XCTAssertTrue(thrownError { try inv.setArgument(Int(1), at: 0) }?.isSignatureMismatch ?? false)
        XCTAssertTrue(thrownError { try inv.setArgument(1.0, at: 1) }?.isSignatureMismatch ?? false, "f is not d")
        XCTAssertTrue(thrownError { try inv.setArgument(Float(1), at: 2) }?.isSignatureMismatch ?? false)
        XCTAssertTrue(thrownError { try inv.setArgument(Int(1), at: 3) }?.isSignatureMismatch ?? false)
        XCTAssertTrue(thrownError { try inv.setArgument(DynamicValue.double(1), at: 1) }?.isSignatureMismatch ?? false)
        XCTAssertTrue(thrownError { try inv.argument(at: 2, as: Int.self) }?.isSignatureMismatch ?? false)
        XCTAssertTrue(thrownError { try inv.argument(at: 3, as: Double.self) }?.isSignatureMismatch ?? false)
        XCTAssertTrue(thrownError { try inv.argument(at: 0, as: Point.self) }?.isSignatureMismatch ?? false)
        for bad in [-1, 4, 100] {
            XCTAssertTrue(thrownError { try inv.setArgument(Int8(1), at: bad) }?.isInvalidArgument ?? false, "\(bad)")
            XCTAssertTrue(thrownError { try inv.argument(at: bad, as: Int8.self) }?.isInvalidArgument ?? false, "\(bad)")
            XCTAssertTrue(thrownError { try inv.argumentValue(at: bad) }?.isInvalidArgument ?? false, "\(bad)")
        }
        XCTAssertTrue(thrownError { try inv.returnValue(as: Double.self) }?.isSignatureMismatch ?? false)
        XCTAssertTrue(thrownError { try inv.setReturnValue(2.0) }?.isSignatureMismatch ?? false)
        XCTAssertTrue(thrownError { try inv.setReturnValue(Optional(o)) }?.isSignatureMismatch ?? false)
        // Compatible spellings are accepted: 'q' and 'l' are the same machine type.
        try inv.setReturnValue(Int64(5))
        XCTAssertEqual(try inv.returnValue(as: Int.self), 5)
        // A struct with the same layout under another name is accepted; a different layout is not.
        let s = Invocation(signature: try Signature("v@:{Pair=dd}"), target: o, selector: "p:")
        try s.setArgument(Point(x: 1, y: 2), at: 0)
        XCTAssertTrue(thrownError { try s.setArgument(FwdRect(origin: Point(x: 0, y: 0), size: FwdSize(width: 0, height: 0)), at: 0) }?.isSignatureMismatch ?? false)
        let void = Invocation(signature: try Signature("v@:"), target: o, selector: "v")
        XCTAssertTrue(thrownError { try void.returnValue(as: Int.self) }?.isSignatureMismatch ?? false)
        XCTAssertEqual(void.argumentCount, 0)
        XCTAssertTrue(thrownError { try void.argument(at: 0, as: Int.self) }?.isInvalidArgument ?? false)
    }

    func testReturnValuesOfEachShape() throws {
        let cls = try makeClass("InvReturns")
        try cls.addMethod("i") { (_: ObjectRef) -> Int8 in -7 }
        try cls.addMethod("d") { (_: ObjectRef) -> Double in 2.5 }
        try cls.addMethod("f") { (_: ObjectRef) -> Float in 1.25 }
        try cls.addMethod("b") { (_: ObjectRef) -> Bool in true }
        try cls.addMethod("r") { (_: ObjectRef) in FwdRect(origin: Point(x: 1, y: 2), size: FwdSize(width: 3, height: 4)) }
        try cls.addMethod("o") { (me: ObjectRef) -> Object? in try me.runtimeClass!.createInstance() }
        let o = try cls.createInstance()

        let i = Invocation(signature: try Signature("c@:"), target: o, selector: "i")
        try i.invoke()
        XCTAssertEqual(try i.returnValue(as: Int8.self), -7)
        XCTAssertEqual(i.returnValue.intValue, -7)
        let d = Invocation(signature: try Signature("d@:"), target: o, selector: "d")
        try d.invoke()
        XCTAssertEqual(try d.returnValue(as: Double.self), 2.5)
        let f = Invocation(signature: try Signature("f@:"), target: o, selector: "f")
        try f.invoke()
        XCTAssertEqual(try f.returnValue(as: Float.self), 1.25)
        let b = Invocation(signature: try Signature("B@:"), target: o, selector: "b")
        try b.invoke()
        XCTAssertEqual(try b.returnValue(as: Bool.self), true)
        let r = Invocation(signature: try Signature("{Rect={Point=dd}{Size=dd}}@:"), target: o, selector: "r")
        try r.invoke()
        XCTAssertEqual(try r.returnValue(as: FwdRect.self), FwdRect(origin: Point(x: 1, y: 2), size: FwdSize(width: 3, height: 4)))
        try r.setReturnValue(FwdRect(origin: Point(x: 9, y: 9), size: FwdSize(width: 9, height: 9)))
        XCTAssertEqual(try r.returnValue(as: FwdRect.self).origin.x, 9)

        // Object returns: the record owns the +1 it got; reading gives the reader its own.
        do {
            let obj = Invocation(signature: try Signature("@@:"), target: o, selector: "o")
            try obj.invoke()
            XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 2)
            let first: Object? = try obj.returnValue()
            XCTAssertEqual(first?.retainCount, 2)
            try obj.invoke()  // the first result is released by the record
            XCTAssertEqual(first?.retainCount, 1)
            XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 3)
            try obj.setReturnValue(Optional(o))  // the second result goes
            XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 2)
            XCTAssertEqual(o.retainCount, 2, "the handle and the return value the record owns (the target is not retained)")
        }
        XCTAssertEqual(o.retainCount, 1)
        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 1)
    }
}
