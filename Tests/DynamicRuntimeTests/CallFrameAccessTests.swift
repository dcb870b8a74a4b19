// Invocation and HookContext read and write their frames through one accessor: the same
// names, the same checks, the same errors.
import TestSupport
import XCTest
@testable import DynamicRuntime

final class CallFrameAccessTests: XCTestCase {
    func testHookContextAndInvocationAnswerTheSameNamesAlike() throws {
        let cls = try makeClass("FrameAccess")
        try cls.addMethod("scale:by:") { (_: ObjectRef, x: Int, f: Double) -> Double in Double(x) * f }
        let o = try cls.createInstance()

        let seen = Locked<[String]>([])
        let token = try cls.hook("scale:by:", .after) { ctx in
            let fromHook = [try ctx.argumentValue(at: 0).description, ctx.argumentValues.map(\.description).joined(separator: ","),
                            ctx.returnValue.description]
            seen.withLock { $0 += fromHook }
            XCTAssertTrue(thrownError { try ctx.argumentValue(at: 2) }?.isInvalidArgument ?? false)
            XCTAssertTrue(thrownError { try ctx.argument(at: 1, as: Int.self) }?.isSignatureMismatch ?? false)
            try ctx.setReturnValue(DynamicValue.double(-1))
        }
        defer { token.remove() }
        let r: Double = try o.send("scale:by:", 4, 2.5)
        XCTAssertEqual(r, -1)

        let inv = Invocation(signature: try Signature("d@:qd"), target: o, selector: "scale:by:")
        try inv.setArgument(4, at: 0)
        try inv.setArgument(2.5, at: 1)
        token.remove()
        try inv.invoke()
        let fromInvocation = [try inv.argumentValue(at: 0).description, inv.argumentValues.map(\.description).joined(separator: ","),
                              inv.returnValue.description]
        XCTAssertEqual(seen.current, ["4", "4,2.5", "10.0"])
        XCTAssertEqual(fromInvocation, seen.current)
        XCTAssertTrue(thrownError { try inv.argumentValue(at: 2) }?.isInvalidArgument ?? false)
        XCTAssertTrue(thrownError { try inv.argument(at: 1, as: Int.self) }?.isSignatureMismatch ?? false)
        try inv.setReturnValue(DynamicValue.double(-1))
        XCTAssertEqual(try inv.returnValue(as: Double.self), -1)
        XCTAssertTrue(thrownError { try inv.setReturnValue(DynamicValue.int64(1)) }?.isSignatureMismatch ?? false)
    }
}
