import TestSupport
import CDynamicRuntime
import Foundation
import XCTest
@testable import DynamicRuntime

#if arch(x86_64)
/// long double (`D`, Swift's `Float80`) arguments and returns through every path: closure
/// IMPs (the spill entry: arguments on the stack, the return loaded into %st(0)), C functions, typed and dynamic
/// sends, hooks, invocation records, forwarding (Swift and the forwarding IMP called from C).
/// After objc4 test/msgSend.m's long double cases and libobjc2 Test/objc_msgSend.m.
///
/// They run in the test process: the fallback's libffi closures are made read+execute once
/// written (`sf_ffi_prep_closure`), so no page is writable and executable (`TrampolineTests`).
final class LongDoubleTests: XCTestCase {
    /// A value a Double cannot hold: the low bits of the 64-bit mantissa must survive.
    private let precise: Float80 = 1 + Float80.ulpOfOne * 3

    func testClosureMethodsTypedAndDynamicSends() throws {
        let cls = try RuntimeClass(name: uniqueClassName("LDClosure"))
        try cls.addMethod("scale:by:") { (_: ObjectRef, x: Float80, n: Int) -> Float80 in x * Float80(n) }
        let sig = try XCTUnwrap(cls.ownMethod(for: "scale:by:")?.signature)
        XCTAssertEqual(sig.encoding, "D@:Dq")
        XCTAssertNotNil(sig.storage.layout, "the spill entry carries x87 values")
        XCTAssertEqual(cls.ownMethod(for: "scale:by:")?.implementation.owner?.isTrampoline, true)
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("scale:by:", precise, 2) as Float80, precise * 2)
        guard case let .longDouble(v) = try o.send("scale:by:", DynamicValue.longDouble(precise), 3) else {
            return XCTFail("a dynamic send returns .longDouble")
        }
        XCTAssertEqual(v, precise * 3)
        // From C: the IMP called directly with the C ABI (x87 return, argument in memory).
        typealias F = @convention(c) (sf_id, sf_sel, Float80, Int) -> Float80
        let imp = try XCTUnwrap(sf_msg_lookup(o.raw, Selector("scale:by:").raw))
        XCTAssertEqual(unsafeBitCast(imp, to: F.self)(o.raw, Selector("scale:by:").raw, precise, 4), precise * 4)
    }

    func testACFunctionIMPAndSfMsgSend() throws {
        let cls = try RuntimeClass(name: uniqueClassName("LDFunction"))
        let half: @convention(c) (sf_id?, sf_sel?, Float80, Float80) -> Float80 = { _, _, a, b in (a + b) / 2 }
        try cls.addMethod("mean:with:", implementation: IMP(unsafeBitCast(half, to: sf_imp.self)), types: "D@:DD")
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("mean:with:", precise, precise + 2) as Float80, precise + 1)
        var a = precise, b: Float80 = 3, r: Float80 = 0
        withUnsafeMutablePointer(to: &a) { pa in
            withUnsafeMutablePointer(to: &b) { pb in
                var args: [UnsafeMutableRawPointer?] = [UnsafeMutableRawPointer(pa), UnsafeMutableRawPointer(pb)]
                XCTAssertEqual(sf_msg_send(o.raw, Selector("mean:with:").raw, &r, &args), SF_OK)
            }
        }
        XCTAssertEqual(r, (precise + 3) / 2)
    }

    func testHooksAndInvocations() throws {
        let cls = try RuntimeClass(name: uniqueClassName("LDHook"))
        try cls.addMethod("twice:") { (_: ObjectRef, x: Float80) -> Float80 in x * 2 }
        let seen = Locked<[Float80]>([])
        let before = try cls.hook("twice:", .before) { ctx in seen.append(try ctx.argument(at: 0, as: Float80.self)) }
        let after = try cls.hook("twice:", .after) { ctx in
            guard case let .longDouble(r) = ctx.returnValue else { throw RuntimeError.invalidArgument(.init(selector: "twice:", expected: "a long double return", actual: "\(ctx.returnValue)")) }
            try ctx.setReturnValue(r + 1)
        }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("twice:", precise) as Float80, precise * 2 + 1)
        XCTAssertEqual(seen.current, [precise])
        XCTAssertTrue(before.remove())
        XCTAssertTrue(after.remove())
        XCTAssertEqual(try o.send("twice:", precise) as Float80, precise * 2)

        let inv = Invocation(signature: try Signature("D@:D"), target: o, selector: "twice:")
        try inv.setArgument(precise, at: 0)
        try inv.invoke()
        XCTAssertEqual(try inv.returnValue(as: Float80.self), precise * 2)
        XCTAssertThrowsError(try inv.setArgument(1.5, at: 0), "a Double is not a long double")
    }

    /// Long doubles between integers, on the stack at 16-byte boundaries, through the spill
    /// entry (called from C), a hook's direct call of the original and an invocation replay,
    /// each against the libffi closure of the same method (trampolines off).
    func testStackPlacementAgreesWithTheLibffiClosure() throws {
        typealias F = @convention(c) (sf_id, sf_sel, Int, Float80, Int, Float80) -> Float80
        var results: [[Float80]] = []
        for trampolines in [1, 0] {
            sf_tramp_set_enabled(Int32(trampolines))
            defer { sf_tramp_set_enabled(1) }
            let cls = try RuntimeClass(name: uniqueClassName("LDStack"))
            try cls.addMethod("mix:with:and:with:") { (_: ObjectRef, a: Int, x: Float80, b: Int, y: Float80) -> Float80 in
                Float80(a) * x - Float80(b) * y
            }
            XCTAssertEqual(cls.ownMethod(for: "mix:with:and:with:")?.implementation.owner?.isTrampoline, trampolines == 1)
            let o = try cls.createInstance()
            let sel = Selector("mix:with:and:with:")
            let imp = try XCTUnwrap(sf_msg_lookup(o.raw, sel.raw))
            var row: [Float80] = [unsafeBitCast(imp, to: F.self)(o.raw, sel.raw, 3, precise, -2, precise / 3)]
            row.append(try o.send(sel, 5, precise, 7, Float80(0.25)) as Float80)
            let token = try cls.hook(sel, .instead) { ctx in try ctx.proceed() }
            row.append(unsafeBitCast(try XCTUnwrap(sf_msg_lookup(o.raw, sel.raw)), to: F.self)(o.raw, sel.raw, 2, precise, 1, precise))
            XCTAssertTrue(token.remove())
            let inv = Invocation(signature: try Signature("D@:qDqD"), target: o, selector: sel)
            try inv.setArgument(4, at: 0)
            try inv.setArgument(precise, at: 1)
            try inv.setArgument(-1, at: 2)
            try inv.setArgument(precise * 2, at: 3)
            try inv.invoke()
            row.append(try inv.returnValue(as: Float80.self))
            results.append(row)
        }
        XCTAssertEqual(results[0], [3 * precise + 2 * (precise / 3), 5 * precise - 7 * 0.25, 2 * precise - precise, 4 * precise + precise * 2])
        XCTAssertEqual(results[0], results[1], "the spill entry agrees with the libffi closure")
    }

    /// A forwarded call with long double arguments and return: a typed send to a missing
    /// method, and the forwarding IMP installed as a method and called from C.
    func testForwardedCalls() throws {
        let cls = try RuntimeClass(name: uniqueClassName("LDForward"))
        try cls.setMethodSignature { _, sel in sel == "sum:and:" ? try Signature("D@:DD") : nil }
        let seen = Locked<[Float80]>([])
        try cls.setForwardInvocation { inv in
            let a: Float80 = try inv.argument(at: 0), b: Float80 = try inv.argument(at: 1)
            seen.withLock { $0 += [a, b] }
            try inv.setReturnValue(a + b)
        }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("sum:and:", precise, Float80(2)) as Float80, precise + 2)
        try cls.addMethod("total:plus:", implementation: .forwarding, types: "D@:DD")
        typealias F = @convention(c) (sf_id, sf_sel, Float80, Float80) -> Float80
        let total = unsafeBitCast(IMP.forwarding.pointer, to: F.self)
        XCTAssertEqual(total(o.raw, Selector("sum:and:").raw, precise, 10), precise + 10, "signature from methodSignature")
        XCTAssertEqual(total(o.raw, Selector("total:plus:").raw, 1, precise), precise + 1, "signature from the method entry")
        XCTAssertEqual(seen.current, [precise, 2, precise, 10, 1, precise])
    }
}
#endif
