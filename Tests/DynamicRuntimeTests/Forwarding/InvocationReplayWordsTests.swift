// Bench cases 7d, 7e: a replayed invocation whose arguments are 2-5 words in integer registers
// and whose return is a word or none calls the IMP with the record's words directly. Each
// shape agrees with the argument-vector call (trampolines off), receiver and selector included.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class InvocationReplayWordsTests: XCTestCase {
    override func tearDown() {
        sf_tramp_set_enabled(1)
        super.tearDown()
    }

    /// Runs `body` with the word path (trampolines on) and the argument-vector path (off).
    private func bothWays(_ body: () throws -> Void) rethrows {
        sf_tramp_set_enabled(1)
        try body()
        sf_tramp_set_enabled(0)
        try body()
        sf_tramp_set_enabled(1)
    }

    func testWordSignaturesReplayWithTheirReceiverSelectorAndArguments() throws {
        let cls = try makeClass("ReplayWords")
        nonisolated(unsafe) let receivers = Locked<[sf_id?]>([])
        // C functions that report what they got, _cmd included.
        let cmd: @convention(c) (sf_id?, sf_sel?) -> sf_sel? = { _, s in s }
        let three: @convention(c) (sf_id?, sf_sel?, Int, Int, Int) -> Int = { _, _, a, b, c in a * 100 + b * 10 + c }
        try cls.addMethod("cmd", implementation: IMP(unsafeBitCast(cmd, to: sf_imp.self)), types: ":@:")
        try cls.addMethod("three:b:c:", implementation: IMP(unsafeBitCast(three, to: sf_imp.self)), types: "q@:qqq")
        try cls.addMethod("none") { (me: ObjectRef) -> Int in
            receivers.append(me.raw)
            return -7
        }
        try cls.addMethod("neg:") { (_: ObjectRef, a: Int) -> Int in -a }
        try cls.addMethod("note:", { (me: ObjectRef, a: Int) in receivers.append(me.raw); _ = a })
        try cls.addMethod("same:") { (_: ObjectRef, o: ObjectRef) -> Object? in o.retained() }
        try cls.addMethod("narrow:and:") { (_: ObjectRef, a: Int32, b: Int32) -> Int32 in a &- b }
        let o = try cls.createInstance()
        let other = try cls.createInstance()

        try bothWays {
            let c = Invocation(signature: try Signature(":@:"), target: o.ref, selector: "cmd")
            try c.invoke()
            XCTAssertEqual(try c.returnValue(as: Selector.self), Selector("cmd"))

            let t = Invocation(signature: try Signature("q@:qqq"), target: o.ref, selector: "three:b:c:")
            try t.setArgument(1, at: 0)
            try t.setArgument(2, at: 1)
            try t.setArgument(3, at: 2)
            try t.invoke()
            XCTAssertEqual(try t.returnValue(as: Int.self), 123)

            let n = Invocation(signature: try Signature("q@:"), target: o.ref, selector: "none")
            try n.invoke(target: other.ref)
            XCTAssertEqual(try n.returnValue(as: Int.self), -7)
            XCTAssertEqual(receivers.take(), [other.raw], "the receiver word is the record's target")

            let g = Invocation(signature: try Signature("q@:q"), target: o.ref, selector: "neg:")
            try g.setArgument(Int.min + 1, at: 0)
            try g.invoke()
            XCTAssertEqual(try g.returnValue(as: Int.self), Int.max)

            let v = Invocation(signature: try Signature("v@:q"), target: o.ref, selector: "note:")
            try v.setArgument(5, at: 0)
            try v.invoke()
            XCTAssertEqual(receivers.take(), [o.raw])

            // An object return is owned by the record (+1) and released with it.
            let before = sf_object_retainCount(other.raw)
            do {
                let s = Invocation(signature: try Signature("@@:@"), target: o.ref, selector: "same:")
                try s.setArgument(other.ref, at: 0)
                try s.invoke()
                XCTAssertEqual(s._returnSlot.load(as: sf_id?.self), other.raw)
                XCTAssertEqual(sf_object_retainCount(other.raw), before + 1)
                try s.invoke()
                XCTAssertEqual(sf_object_retainCount(other.raw), before + 1, "a second replay drops the first result")
            }
            XCTAssertEqual(sf_object_retainCount(other.raw), before)

            // Narrower integers keep the argument-vector call (sign extension of the result).
            let w = Invocation(signature: try Signature("i@:ii"), target: o.ref, selector: "narrow:and:")
            try w.setArgument(Int32(-5), at: 0)
            try w.setArgument(Int32(7), at: 1)
            try w.invoke()
            XCTAssertEqual(try w.returnValue(as: Int32.self), -12)
        }
    }
}
