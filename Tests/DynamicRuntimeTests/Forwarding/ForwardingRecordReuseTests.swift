// Bench cases 7d, 7e: the record a typed send hands to forwardInvocation: is recycled for the
// next forwarded call of its signature when the handler kept no copy, and left alone when it
// did.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class ForwardingRecordReuseTests: XCTestCase {
    func testARecordNobodyKeptIsReusedAndAKeptOneIsLeftAlone() throws {
        let target = try makeClass("ReuseTarget")
        try target.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let t = try target.createInstance()
        let tref = t.ref
        let forwarder = try makeClass("ReuseForwarder")
        let records = Locked<[UInt]>([])
        let kept = Locked<[Invocation]>([])
        let keep = Locked(false)
        try forwarder.setForwardInvocation { invocation in
            records.append(UInt(bitPattern: Unmanaged.passUnretained(invocation.storage).toOpaque()))
            if keep.current {
                invocation.retainArguments()
                kept.append(invocation)
            }
            try invocation.invoke(target: tref)
        }
        let o = try forwarder.createInstance()
        for i in 0..<3 { XCTAssertEqual(try o.send("add:to:", i, 10) as Int, i + 10) }
        var seen = records.current
        XCTAssertEqual(Set(seen).count, 1, "one record, refilled for each call")

        keep.set(true)
        XCTAssertEqual(try o.send("add:to:", 5, 6) as Int, 11)
        keep.set(false)
        XCTAssertEqual(try o.send("add:to:", 7, 8) as Int, 15)
        XCTAssertEqual(try o.send("add:to:", 9, 1) as Int, 10)
        seen = records.current
        XCTAssertEqual(seen[3], seen[0], "the spare was used for the kept call")
        XCTAssertNotEqual(seen[4], seen[3], "a kept record is not refilled")
        XCTAssertEqual(seen[5], seen[4], "the new record is recycled in turn")

        // The kept record still holds its own call.
        let k = kept.current[0]
        XCTAssertEqual(try k.argument(at: 0, as: Int.self), 5)
        XCTAssertEqual(try k.argument(at: 1, as: Int.self), 6)
        XCTAssertEqual(try k.returnValue(as: Int.self), 11)
        XCTAssertEqual(k.target, tref)
        kept.set([])
    }

    func testARecycledRecordHoldsNoReferences() throws {
        let target = try makeClass("ReuseObjTarget")
        try target.addMethod("echo:") { (_: ObjectRef, o: ObjectRef) -> Object? in o.retained() }
        let t = try target.createInstance()
        let tref = t.ref
        let forwarder = try makeClass("ReuseObjForwarder")
        try forwarder.setForwardInvocation { invocation in
            invocation.retainArguments()
            try invocation.invoke(target: tref)
        }
        let o = try forwarder.createInstance()
        let argument = try target.createInstance()
        let before = sf_object_retainCount(argument.raw)
        for _ in 0..<3 {
            let r: Object? = try o.send("echo:", argument.ref)
            XCTAssertEqual(r?.raw, argument.raw)
        }
        XCTAssertEqual(sf_object_retainCount(argument.raw), before, "the spare released the argument it retained")
    }
}
