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

    func testCodeWrittenOnceOverMessageFrameReadsHooksAndInvocationsAlike() throws {
        let cls = try makeClass("FrameGeneric")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        let o = try cls.createInstance()

        let fromHook = Locked<[String]>([])
        let token = try cls.hook("add:to:", .after) { ctx in
            let s = try summary(ctx)
            let operation = thrownError { try setFirst(ctx, to: 1.5) }?.context.operation
            fromHook.withLock { $0 = [s, operation ?? "no error"] }
        }
        let r: Int = try o.send("add:to:", 2, 3)
        token.remove()
        XCTAssertEqual(r, 5)

        let inv = Invocation(signature: try Signature("q@:qq"), target: o, selector: "add:to:")
        try setFirst(inv, to: 2)
        try inv.setArgument(3, at: 1)
        try inv.invoke()
        XCTAssertEqual(fromHook.current, ["add:to: 2 [2, 3] -> 5", "the hook"])
        XCTAssertEqual(try summary(inv), fromHook.current[0])
        XCTAssertEqual(thrownError { try setFirst(inv, to: 1.5) }?.context.operation, "the invocation")
    }
}

/// A call's summary, written once for both kinds of frame.
private func summary(_ frame: some MessageFrame) throws -> String {
    "\(frame.selector.name) \(try frame.argument(at: 0, as: Int.self)) [\(frame.argumentValues.map(\.description).joined(separator: ", "))] -> \(frame.returnValue)"
}

private func setFirst<T: MessageArgument>(_ frame: some MessageFrame, to value: T) throws {
    try frame.setArgument(value, at: 0)
}
