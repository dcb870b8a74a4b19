// A per-object hook's entry resolves the visible class's method when caches are flushed, not
// on every call: every change to the methods it wraps must still reach the next call.
import TestSupport
import CDynamicRuntime
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

    /// The entry holds the visible class's IMP and hook itself (resolved when they change, not
    /// read per call): every way they change without a new method must reach the next call,
    /// typed and from C through the IMP.
    func testTheResolvedOriginalFollowsChangesInPlace() throws {
        typealias F1 = @convention(c) (sf_id?, sf_sel?, Int) -> Int
        let base = try makeClass("ResolutionInPlaceBase")
        try base.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        try base.addMethod("other:") { (_: ObjectRef, x: Int) in x + 7 }
        let sub = try makeClass("ResolutionInPlaceSub", superclass: base)
        let object = try sub.createInstance()
        let token = try object.hook("value:", .instead, proceedAndAdd(1000))
        func check(_ expected: Int, _ what: String) throws {
            XCTAssertEqual(try object.send("value:", 1) as Int, expected, "typed: \(what)")
            let sel = Selector("value:")
            let imp = unsafeBitCast(sf_lookup_method(sf_object_isa(object.raw), sel.raw).flatMap(sf_method_imp), to: F1.self)
            XCTAssertEqual(imp(object.raw, sel.raw, 1), expected, "through the IMP: \(what)")
        }
        try check(1002, "the inherited original")

        // The superclass's method replaced in place (no flush): the entry's original follows.
        _ = try base.replaceMethod("value:") { (_: ObjectRef, x: Int) in x + 2 }
        try check(1003, "replaced in the superclass")
        try base.exchangeImplementations("value:", "other:")
        try check(1008, "exchanged in the superclass")
        let plain = try makeClass("ResolutionInPlaceOwner")
        let m = try plain.addMethod("value:") { (_: ObjectRef, x: Int) in x + 40 }
        _ = sf_method_setImplementation(base.ownMethod(for: "value:")!.raw, m.implementation.pointer)
        try check(1041, "set from C to a plain function")

        // A class hook on the superclass's own method (installed in place), then gone.
        let baseToken = try base.hook("value:", .instead, proceedAndAdd(300))
        try check(1341, "class hook, then the object's")
        _ = try base.replaceMethod("value:") { (_: ObjectRef, x: Int) in x + 50 }
        try check(1351, "replaced under the class hook")
        XCTAssertTrue(baseToken.remove())
        try check(1051, "the class hook gone: the object's over what it wrapped")
        _ = try base.replaceMethod("value:") { (_: ObjectRef, x: Int) in x + 60 }
        try check(1061, "replaced after the class hook went")

        XCTAssertTrue(token.remove())
        try check(61, "unhooked")
        withExtendedLifetime(plain) {}
    }
}
