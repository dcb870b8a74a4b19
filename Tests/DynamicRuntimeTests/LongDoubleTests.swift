import TestSupport
import CShims
import Foundation
import XCTest
@testable import DynamicRuntime

#if arch(x86_64)
/// long double (`D`, Swift's `Float80`) arguments and returns through every path: closure
/// IMPs (libffi closures: the trampolines carry no x87 values), C functions, typed and dynamic
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
        XCTAssertNil(sig.storage.layout, "no register trampoline for x87 values")
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
