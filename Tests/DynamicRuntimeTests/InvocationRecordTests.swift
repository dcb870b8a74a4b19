// Acceptance tests for issue 3: Invocation records — typed access, invoking, retaining and
// replaying on another thread.
import TestSupport
import CShims
import Foundation
import Glibc
import XCTest
@testable import DynamicRuntime

final class InvocationRecordTests: XCTestCase {
    static let allTypes = "v@:cCsSiIqQfdB*@#:^v{Point=dd}{Rect={Point=dd}{Size=dd}}"

    var objectBaseline = 0

    override func setUp() {
        super.setUp()
        fwdCollect()
        objectBaseline = Runtime.liveObjectCount
    }

    /// A class with `all:…` taking every argument type, recording what it received.
    func makeRecorder(_ seen: Locked<[String]>) throws -> RuntimeClass {
        let cls = try makeClass("InvRecorder")
        try cls.addMethod("all", types: Self.allTypes) { _, args in
            let sig = try Signature(Self.allTypes)
            let values = (2..<sig.argumentTypes.count).map {
                fwdFingerprint(DynamicValue.load(sig.argumentTypes[$0], from: args[$0]!, isReturn: false))
            }
            seen.withLock { $0.append(values.joined(separator: " ")) }
        }
        return cls
    }

    struct Values {
        let other: Object
        let cls: RuntimeClass
        let text = fwdStaticCString("text")
        let pointer = UnsafeRawPointer(bitPattern: 0xDEAD_BEE0)!
        let point = Point(x: -1.5, y: 2.25)
        let rect = FwdRect(origin: Point(x: 1, y: 2), size: FwdSize(width: 3, height: 4))
    }

    func fill(_ inv: Invocation, _ v: Values) throws {
        try inv.setArgument(Int8.min, at: 0)
        try inv.setArgument(UInt8.max, at: 1)
        try inv.setArgument(Int16.min, at: 2)
        try inv.setArgument(UInt16.max, at: 3)
        try inv.setArgument(Int32.min, at: 4)
        try inv.setArgument(UInt32.max, at: 5)
        try inv.setArgument(Int.min, at: 6)
        try inv.setArgument(UInt64.max, at: 7)
        try inv.setArgument(Float(-0.5), at: 8)
        try inv.setArgument(Double.pi, at: 9)
        try inv.setArgument(true, at: 10)
        try inv.setArgument(v.text, at: 11)
        try inv.setArgument(v.other.ref, at: 12)
        try inv.setArgument(ClassRef(v.cls), at: 13)
        try inv.setArgument(Selector("some:selector:"), at: 14)
        try inv.setArgument(v.pointer, at: 15)
        try inv.setArgument(v.point, at: 16)
        try inv.setArgument(v.rect, at: 17)
    }

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

    func testInvokeInvokeTargetAndInvokeUsing() throws {
        let a = try makeClass("InvA")
        try a.addMethod("combine:with:") { (_: ObjectRef, x: Int, y: Int) in x + y }
        try a.addMethod("other:with:") { (_: ObjectRef, x: Int, y: Int) in x - y }
        let b = try makeClass("InvB")
        try b.addMethod("combine:with:") { (_: ObjectRef, x: Int, y: Int) in x * y }
        let oa = try a.createInstance()
        let ob = try b.createInstance()
        let inv = Invocation(signature: try Signature("q@:qq"), target: oa, selector: "combine:with:")
        try inv.setArgument(6, at: 0)
        try inv.setArgument(7, at: 1)
        XCTAssertNil(inv.implementation)

        try inv.invoke()
        XCTAssertEqual(try inv.returnValue(as: Int.self), 13)
        try inv.invoke(target: ob)
        XCTAssertEqual(inv.target.raw, ob.raw)
        XCTAssertEqual(try inv.returnValue(as: Int.self), 42)
        try inv.invoke(target: oa)
        XCTAssertEqual(try inv.returnValue(as: Int.self), 13)

        // A Swift closure's IMP and a C function's, called directly without lookup.
        try inv.invoke(using: a.ownMethod(for: "other:with:")!.implementation)
        XCTAssertEqual(try inv.returnValue(as: Int.self), -1)
        let cFunction: @convention(c) (sf_id?, sf_sel?, Int64, Int64) -> Int64 = { _, _, x, y in x * 100 + y }
        try inv.invoke(using: IMP(unsafeBitCast(cFunction, to: sf_imp.self)))
        XCTAssertEqual(try inv.returnValue(as: Int.self), 607)

        // Changing the selector changes what lookup finds.
        inv.selector = "other:with:"
        try inv.invoke()
        XCTAssertEqual(try inv.returnValue(as: Int.self), -1)

        // Unknown selector: the forwarding path runs, and without it the error comes back.
        inv.selector = "unknown:with:"
        XCTAssertEqual(thrownError { try inv.invoke() },
                       .doesNotRecognizeSelector(.init(className: a.name, selector: "unknown:with:", isClassMethod: false)))
        try a.setForwardInvocation { fwd in try fwd.setReturnValue(-99) }
        try inv.invoke()
        XCTAssertEqual(try inv.returnValue(as: Int.self), -99)

        // A method whose types differ from the record's.
        try a.addMethod("half:with:") { (_: ObjectRef, x: Double, y: Double) in x / y }
        inv.selector = "half:with:"
        XCTAssertTrue(thrownError { try inv.invoke() }?.isSignatureMismatch ?? false)

        // A nil target answers zero, like a message to nil.
        inv.selector = "combine:with:"
        inv.target = ObjectRef.nil
        try inv.invoke()
        XCTAssertEqual(try inv.returnValue(as: Int.self), 0)
    }

    func testRetainArgumentsRetainsObjectsAndTargetAndCopiesStrings() throws {
        let cls = try makeClass("InvRetain")
        let target = try cls.createInstance()
        let arg = try cls.createInstance()
        let replacement = try cls.createInstance()
        let newTarget = try cls.createInstance()
        let buffer = strdup("original")!
        defer { free(buffer) }

        let inv = Invocation(signature: try Signature("v@:@*q"), target: target, selector: "keep:name:n:")
        try inv.setArgument(arg.ref, at: 0)
        try inv.setArgument(CString(buffer), at: 1)
        try inv.setArgument(5, at: 2)
        XCTAssertFalse(inv.argumentsRetained)
        XCTAssertEqual(target.retainCount, 1)
        XCTAssertEqual(arg.retainCount, 1)
        XCTAssertEqual(try inv.argument(at: 1, as: CString.self).pointer, UnsafePointer(buffer), "borrowed until retained")

        inv.retainArguments()
        inv.retainArguments()  // idempotent
        XCTAssertTrue(inv.argumentsRetained)
        XCTAssertEqual(target.retainCount, 2)
        XCTAssertEqual(arg.retainCount, 2)
        let copied = try inv.argument(at: 1, as: CString.self)
        XCTAssertNotEqual(copied.pointer, UnsafePointer(buffer), "the string is copied")
        strcpy(buffer, "changed!")
        XCTAssertEqual(try inv.argument(at: 1, as: CString.self).string, "original")

        // Setting retained arguments and target keeps the counts right.
        try inv.setArgument(replacement.ref, at: 0)
        XCTAssertEqual(arg.retainCount, 1)
        XCTAssertEqual(replacement.retainCount, 2)
        try inv.setArgument(ObjectRef.nil, at: 0)
        XCTAssertEqual(replacement.retainCount, 1)
        try inv.setArgument(replacement.ref, at: 0)
        inv.target = newTarget.ref
        XCTAssertEqual(target.retainCount, 1)
        XCTAssertEqual(newTarget.retainCount, 2)
        try inv.setArgument(CString(buffer), at: 1)
        XCTAssertNotEqual(try inv.argument(at: 1, as: CString.self).pointer, UnsafePointer(buffer))
        XCTAssertEqual(try inv.argument(at: 1, as: CString.self).string, "changed!")
        try inv.setArgument(CString(nil), at: 1)
        XCTAssertNil(try inv.argument(at: 1, as: CString.self).pointer)

        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 4)
    }

    func testRecordReleaseFreesEverythingItRetained() throws {
        let cls = try makeClass("InvRelease")
        try cls.addMethod("keep:name:") { (_: ObjectRef, _: ObjectRef, _: CString) -> Object? in
            try cls.createInstance()
        }
        let target = try cls.createInstance()
        let sig = try Signature("@@:@*")
        let long = String(repeating: "x", count: 4000)
        let before = (heap: fwdLiveHeapBytes(), rss: residentBytes())
        for _ in 0..<20000 {
            let arg = try cls.createInstance()
            let inv = long.withCString { s in
                let inv = Invocation(signature: sig, target: target, selector: "keep:name:")
                try? inv.setArgument(arg.ref, at: 0)
                try? inv.setArgument(CString(s), at: 1)
                inv.retainArguments()
                return inv
            }
            try inv.invoke()  // the record owns the returned object
            XCTAssertEqual(arg.retainCount, 2)
        }
        XCTAssertEqual(target.retainCount, 1)
        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 1, "arguments, targets and results were released")
        // 20000 leaked 4 KB strings would be 80 MB. Under AddressSanitizer RSS grows anyway (freed
        // blocks are quarantined), so there the live heap is measured instead (fwdLiveHeapBytes).
        if let heapBefore = before.heap, let heapAfter = fwdLiveHeapBytes() {
            XCTAssertLessThan(heapAfter - heapBefore, 1 << 20, "copied C strings are freed with the record")
        } else {
            XCTAssertLessThan(residentBytes() - before.rss, 16 << 20, "copied C strings are freed with the record")
        }
    }

    func testRetainedRecordReplaysOnAnotherThreadAfterTheLastOutsideReferenceIsGone() throws {
        let cls = try makeClass("InvReplay", ivars: [("value", .int64)])
        try cls.addMethod("combine:with:name:") { (me: ObjectRef, a: ObjectRef, b: ObjectRef, name: CString) -> Int in
            try me.value(ofIvar: "value", as: Int.self) + a.value(ofIvar: "value", as: Int.self)
                + b.value(ofIvar: "value", as: Int.self) + (name.string?.count ?? -1000)
        }
        let deallocated = Locked<[String]>([])
        let holder = Locked<Invocation?>(nil)
        let weak: [WeakReference]
        do {
            var objects: [Object] = []
            for (i, label) in ["target", "a", "b"].enumerated() {
                let o = try cls.createInstance()
                try o.setValue([1, 10, 100][i], forIvar: "value")
                o.onDeallocate { _ in deallocated.withLock { $0.append(label) } }
                objects.append(o)
            }
            weak = objects.map { WeakReference($0) }
            let name = strdup("hello")!
            let inv = Invocation(signature: try Signature("q@:@@*"), target: objects[0], selector: "combine:with:name:")
            try inv.setArgument(objects[1].ref, at: 0)
            try inv.setArgument(objects[2].ref, at: 1)
            try inv.setArgument(CString(name), at: 2)
            inv.retainArguments()
            // The caller's string and objects go away (overwritten in place first: "hello" has
            // 5 bytes before its NUL).
            memset(name, 0x58, 5)
            free(name)
            holder.set(inv)
        }
        XCTAssertEqual(deallocated.current, [], "the record keeps its objects alive")
        XCTAssertTrue(weak.allSatisfy { $0.object != nil })

        let result = Locked<Int?>(nil)
        let aliveDuringReplay = Locked(false)
        let deallocatedAfterReplay = Locked<[String]>([])
        let ranElsewhere = fwdRunOnNewThread {
            var inv = holder.withLock { v -> Invocation? in
                defer { v = nil }
                return v
            }
            do {
                try inv!.invoke()
                result.set(try inv!.returnValue(as: Int.self))
            } catch {
                XCTFail("replay failed: \(error)")
            }
            aliveDuringReplay.set(weak.allSatisfy { $0.object != nil } && deallocated.current.isEmpty)
            inv = nil  // the record dies here, on this thread
            deallocatedAfterReplay.set(deallocated.current)
        }
        XCTAssertTrue(ranElsewhere)
        XCTAssertEqual(result.current, 1 + 10 + 100 + 5)
        XCTAssertTrue(aliveDuringReplay.current)
        XCTAssertEqual(Set(deallocatedAfterReplay.current), ["target", "a", "b"], "released when the record died")
        XCTAssertTrue(weak.allSatisfy { $0.object == nil })
        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline)
    }

    func testARecordWithALargeStructArgumentCanBeInvokedAgain() throws {
        let cls = try makeClass("InvBigStruct")
        let received = Locked<[FwdRect]>([])
        try cls.addMethod("keep:") { (_: ObjectRef, r: FwdRect) -> Double in
            received.withLock { $0.append(r) }
            return r.origin.x + r.size.height
        }
        let o = try cls.createInstance()
        let rect = FwdRect(origin: Point(x: 1, y: 2), size: FwdSize(width: 3, height: 4))
        let inv = Invocation(signature: try Signature("d@:{Rect={Point=dd}{Size=dd}}"), target: o, selector: "keep:")
        try inv.setArgument(rect, at: 0)
        try inv.invoke()
        try inv.invoke()
        try inv.invoke(using: cls.ownMethod(for: "keep:")!.implementation)
        XCTAssertEqual(received.current, [rect, rect, rect])
        // Through fast forwarding, then directly.
        let fwd = try makeClass("InvBigStructFwd")
        try fwd.setForwardingTarget { _, _ in o.ref }
        let f = try fwd.createInstance()
        try inv.invoke(target: f)
        try inv.invoke(target: f)
        XCTAssertEqual(received.current, [rect, rect, rect, rect, rect])
        XCTAssertEqual(try inv.returnValue(as: Double.self), 5)
    }

    func testUnretainedRecordDoesNotOwnAnything() throws {
        let cls = try makeClass("InvBorrow")
        let t = try cls.createInstance()
        let a = try cls.createInstance()
        do {
            let inv = Invocation(signature: try Signature("v@:@"), target: t, selector: "take:")
            try inv.setArgument(a.ref, at: 0)
            XCTAssertEqual(t.retainCount, 1)
            XCTAssertEqual(a.retainCount, 1)
        }
        XCTAssertEqual(t.retainCount, 1)
        XCTAssertEqual(a.retainCount, 1)
    }
}
