// A per-object hook's entry resolves the visible class's method when caches are flushed, not
// on every call: every change to the methods it wraps must still reach the next call.
import TestSupport
import CShims
import XCTest
@testable import DynamicRuntime

final class PerObjectHookResolutionTests: XCTestCase {
    private func proceedAndAdd(_ n: Int) -> @Sendable (HookContext) throws -> Void {
        { ctx in
            try ctx.proceed()
            try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + n)
        }
    }

    func testAnObjectHookReachesTheMethodAsItIsNow() throws {
        let base = try makeClass("ResolutionBase")
        try base.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        let sub = try makeClass("ResolutionSub", superclass: base)
        let object = try sub.createInstance()
        let other = try sub.createInstance()
        let token = try object.hook("value:", .instead, proceedAndAdd(1000))
        XCTAssertEqual(try object.send("value:", 1) as Int, 1002, "the inherited original")

        // An override in the visible class, added after the object was hooked.
        try sub.addMethod("value:") { (_: ObjectRef, x: Int) in x + 10 }
        XCTAssertEqual(try object.send("value:", 1) as Int, 1011, "the new override")
        XCTAssertEqual(try other.send("value:", 1) as Int, 11)

        // Replaced in place.
        _ = try sub.replaceMethod("value:") { (_: ObjectRef, x: Int) in x + 20 }
        XCTAssertEqual(try object.send("value:", 1) as Int, 1021, "the replacement")

        // A class hook comes: class instead hooks run before the object's.
        let classToken = try sub.hook("value:", .instead, proceedAndAdd(100))
        XCTAssertEqual(try object.send("value:", 1) as Int, 1121, "class hook, object hook, original")
        XCTAssertEqual(try other.send("value:", 1) as Int, 121)
        XCTAssertTrue(classToken.remove())
        XCTAssertEqual(try object.send("value:", 1) as Int, 1021, "the class hook gone")

        // The override removed: the superclass's method again.
        try sub.removeMethod("value:")
        XCTAssertEqual(try object.send("value:", 1) as Int, 1002, "back to the inherited original")
        XCTAssertEqual(try other.send("value:", 1) as Int, 2)

        // A hook on the superclass's method is inherited by the visible class.
        let baseToken = try base.hook("value:", .instead, proceedAndAdd(300))
        XCTAssertEqual(try object.send("value:", 1) as Int, 1302)
        XCTAssertTrue(baseToken.remove())
        XCTAssertTrue(token.remove())
        XCTAssertEqual(sf_object_isa(object.raw), sub.raw)
        XCTAssertEqual(try object.send("value:", 1) as Int, 2)
    }

    func testAnObjectHookOverAClassHookOnAnInheritedMethod() throws {
        let base = try makeClass("ResolutionInheritedBase")
        try base.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        let sub = try makeClass("ResolutionInheritedSub", superclass: base)
        // The class hook gives `sub` an entry of its own whose original is looked up in `base`.
        let classToken = try sub.hook("value:", .instead, proceedAndAdd(100))
        let object = try sub.createInstance()
        let token = try object.hook("value:", .instead, proceedAndAdd(1000))
        XCTAssertEqual(try object.send("value:", 1) as Int, 1102)
        _ = try base.replaceMethod("value:") { (_: ObjectRef, x: Int) in x + 5 }
        XCTAssertEqual(try object.send("value:", 1) as Int, 1106, "the class hook's original, looked up now")
        XCTAssertTrue(classToken.remove())
        XCTAssertEqual(try object.send("value:", 1) as Int, 1006, "the object hook alone over the new method")
        XCTAssertTrue(token.remove())
    }
}
