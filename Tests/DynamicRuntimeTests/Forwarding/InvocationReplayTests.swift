// Invocation records — invoking, retaining what they hold,
// releasing it, and replaying on another thread.
import TestSupport
import CDynamicRuntime
import Foundation
import Glibc
import XCTest
@testable import DynamicRuntime

final class InvocationReplayTests: InvocationRecordTestCase {
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
            weak = try objects.map { try WeakReference($0) }
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
