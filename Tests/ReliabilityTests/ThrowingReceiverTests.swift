import TestSupport
import XCTest
import CDynamicRuntime
@testable import DynamicRuntime

/// The error of a throwing method names the receiver's class, which the method
/// may have freed before it threw.
final class ThrowingReceiverTests: XCTestCase {
    struct Boom: Error {}

    /// An object whose only reference is the returned raw +1.
    private func orphan(_ c: RuntimeClass) throws -> sf_id {
        let o = try c.createInstance()
        return sf_retain(o.raw)!
    }

    private func assertFailedNaming(_ className: String, _ selector: String, file: StaticString = #filePath,
                                    line: UInt = #line, _ body: () throws -> Void) {
        do {
            try body()
            XCTFail("nothing was thrown", file: file, line: line)
        } catch let RuntimeError.implementationFailed(context) {
            XCTAssertEqual(context.className, className, file: file, line: line)
            XCTAssertEqual(context.selector, selector, file: file, line: line)
            XCTAssertTrue(context.underlying is Boom, "the body's own error, typed: \(String(describing: context.underlying))",
                          file: file, line: line)
        } catch {
            XCTFail("expected implementationFailed, got \(error)", file: file, line: line)
        }
    }

    func testAMethodThatFreesItsReceiverAndThrows() throws {
        let c = try RuntimeClass(name: "Abuse.Wrap", ivars: [("pad", .int64)])
        try c.addMethod("drop") { (me: ObjectRef) throws -> Int in
            sf_release(me.raw)
            throw Boom()
        }
        let baseline = Runtime.liveObjectCount
        for _ in 0..<64 {
            let raw = try orphan(c)
            assertFailedNaming("Abuse.Wrap", "drop") { _ = try ObjectRef(raw).send("drop") as Int }
        }
        XCTAssertEqual(Runtime.liveObjectCount, baseline)
    }

    func testAHookedOriginalThatFreesItsReceiverAndThrows() throws {
        let c = try RuntimeClass(name: "Abuse.WrapHooked", ivars: [("pad", .int64)])
        try c.addMethod("drop") { (me: ObjectRef) throws -> Int in
            sf_release(me.raw)
            throw Boom()
        }
        let token = try c.hook("drop", .instead) { ctx in try ctx.proceed() }
        defer { token.remove() }
        for _ in 0..<64 {
            let raw = try orphan(c)
            assertFailedNaming("Abuse.WrapHooked", "drop") { _ = try ObjectRef(raw).send("drop") as Int }
        }
    }

    func testASubclassReceiverIsNamed() throws {
        let base = try RuntimeClass(name: "Abuse.WrapBase")
        try base.addMethod("drop") { (me: ObjectRef) throws -> Int in
            sf_release(me.raw)
            throw Boom()
        }
        let sub = try RuntimeClass(name: "Abuse.WrapSub", superclass: base, ivars: [("pad", .int64)])
        let raw = try orphan(sub)
        assertFailedNaming("Abuse.WrapSub", "drop") { _ = try ObjectRef(raw).send("drop") as Int }
    }
}
