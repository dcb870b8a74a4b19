import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// A record emptied for reuse is refilled word by word from a plan (argument sizes
/// of 1, 2, 4 and 8 bytes at their natural offsets), as a throttle's spare record is for every
/// captured call. The copy must carry every argument exactly, retain what the record keeps and
/// release it when emptied again.
final class CaptureByWordsTests: HookBehaviourTestCase {
    func testPlansCoverScalarAndObjectArgumentsOnly() throws {
        let mixed = try Signature("q@:cs@id")
        let plan = InvocationStorage.wordPlan(mixed.storage)
        // Sizes 8 8 1 2 8 4 8, a nibble each; the object is argument 4.
        XCTAssertEqual(plan.plan, 0x8_4_8_2_1_8_8)
        XCTAssertEqual(plan.objects, 1 << 4)
        XCTAssertEqual(InvocationStorage.wordPlan(try Signature("v@:*").storage).plan, 0, "C strings are copied by the slow path")
        XCTAssertEqual(InvocationStorage.wordPlan(try Signature("v@:{FwdPair=qq}").storage).plan, 0, "a 16-byte struct")
    }

    func testCapturedByWordsReplaysEveryArgumentAndKeepsObjectsAlive() throws {
        let cls = try makeClass("WordCapture", ivars: [("tag", .int64)])
        try cls.addMethod("mix:small:obj:") { (_: ObjectRef, a: Int8, b: Int16, o: ObjectRef) -> Int in
            Int(a) * 100_000 + Int(b) * 10 + (try o.value(ofIvar: "tag", as: Int.self))
        }
        try cls.addMethod("mix:f:d:") { (_: ObjectRef, a: Int32, f: Float, d: Double) -> Double in
            Double(a) + Double(f) * 10 + d * 100
        }
        let receiver = try cls.createInstance()
        nonisolated(unsafe) var record: Invocation?
        nonisolated(unsafe) var byWords: [Bool] = []
        let capture: @Sendable (HookContext) -> Void = { ctx in
            // As a throttle's spare: emptied before the next capture fills it.
            record?.emptyForReuse()
            byWords.append(record.map { $0.storage.capturesByWords } ?? false)
            ctx.capture(into: &record)
        }
        let t1 = try cls.hook("mix:small:obj:", .instead, capture)
        let first = try cls.createInstance(), second = try cls.createInstance()
        try first.setValue(3, forIvar: "tag")
        try second.setValue(4, forIvar: "tag")

        _ = try receiver.send("mix:small:obj:", Int8(-7), Int16(300), first.ref) as Int
        XCTAssertEqual(first.retainCount, 2, "the record retains the object argument")
        _ = try receiver.send("mix:small:obj:", Int8(5), Int16(-2), second.ref) as Int
        XCTAssertEqual(byWords, [false, true], "the second capture refilled the emptied record by words")
        XCTAssertEqual(first.retainCount, 1, "emptying released the previous call's object")
        XCTAssertEqual(second.retainCount, 2)
        XCTAssertEqual(record!.target, receiver.ref)
        XCTAssertEqual(record!.selector, "mix:small:obj:")
        t1.remove()
        try record!.invoke()
        XCTAssertEqual(try record!.returnValue(as: Int.self), 5 * 100_000 - 20 + 4)
        record!.emptyForReuse()
        XCTAssertEqual(second.retainCount, 1)
        XCTAssertTrue(record!.target.isNil)

        record = nil
        byWords = []
        let t2 = try cls.hook("mix:f:d:", .instead, capture)
        _ = try receiver.send("mix:f:d:", Int32(1), Float(2.5), 3.25) as Double
        _ = try receiver.send("mix:f:d:", Int32(-9), Float(0.5), -1.5) as Double
        XCTAssertEqual(byWords, [false, true])
        t2.remove()
        try record!.invoke()
        XCTAssertEqual(try record!.returnValue(as: Double.self), -9 + 5 - 150)
        XCTAssertEqual(try record!.argument(at: 0, as: Int32.self), -9)
        XCTAssertEqual(try record!.argument(at: 1, as: Float.self), 0.5)
    }

    /// A throttle's spare keeps the original it would replay, with the hook's box, while
    /// emptied; the next capture keeps it only if that box is still the published one.
    func testASpareReplaysTheOriginalPublishedWhenItWasCaptured() throws {
        let cls = try makeClass("SpareOriginal")
        try cls.addMethod("combine:with:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        let receiver = try cls.createInstance()
        nonisolated(unsafe) var record: Invocation?
        nonisolated(unsafe) var boxes: [UnsafeMutableRawPointer?] = []
        let token = try cls.hook("combine:with:", .instead) { (ctx: HookContext) in
            // As a throttle's spare: emptied through its word before the next capture.
            if let r = record.take() { record = Invocation.fromRetainedWord(r.emptiedRetainedWord()) }
            ctx.capture(intoSpare: &record)
            boxes.append(record!.storage.h.pointee.implementationBox?.pointer)
        }
        // The first call makes the record; the second refills it as a spare, reading the box.
        _ = try receiver.send("combine:with:", 1, 1) as Int
        _ = try receiver.send("combine:with:", 2, 3) as Int
        _ = try receiver.send("combine:with:", 4, 5) as Int
        XCTAssertNotNil(boxes[1])
        XCTAssertEqual(boxes[2], boxes[1], "an unchanged original is kept, not read again")
        try cls.replaceMethod("combine:with:") { (_: ObjectRef, a: Int, b: Int) -> Int in a * b }
        _ = try receiver.send("combine:with:", 6, 7) as Int
        XCTAssertNotNil(boxes[3])
        XCTAssertNotEqual(boxes[3], boxes[2], "a replaced original is read again")
        token.remove()
        try record!.invoke()
        XCTAssertEqual(try record!.returnValue(as: Int.self), 42, "the replay calls the new original")

        // Every other reuse drops it: a forwarded call must never replay a stale IMP.
        record = Invocation.fromRetainedWord(record.take()!.emptiedRetainedWord())
        XCTAssertNotNil(record!.implementation)
        record!.emptyForReuse()
        XCTAssertNil(record!.implementation)
        XCTAssertNil(record!.storage.h.pointee.implementationBox)
    }
}
