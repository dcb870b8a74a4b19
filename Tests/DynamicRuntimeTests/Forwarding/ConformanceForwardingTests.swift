import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// objc4's resolver and forwarding rules, from Swift. The C side is
/// in CInteropTests (ConformanceCTests).
final class ConformanceForwardingTests: XCTestCase {
    private func counting(_ cls: RuntimeClass, adds: String? = nil) throws -> Locked<Int> {
        let calls = Locked(0)
        try cls.setResolveInstanceMethod { c, sel in
            calls.withLock { $0 += 1 }
            guard sel.name == adds else { return false }
            try c.addMethod(sel) { (_: ObjectRef, x: Int) in x * 3 }
            return true
        }
        return calls
    }

    /// objc4 test/resolve.m: the declined answer is cached until methods change.
    func testADeclinedSelectorIsNotResolvedAgainUntilTheClassChanges() throws {
        let base = try RuntimeClass(name: "CFDeclineBase")
        let cls = try RuntimeClass(name: "CFDecline", superclass: base)
        let calls = try counting(cls)
        let o = try cls.createInstance()
        for _ in 0..<5 {
            XCTAssertThrowsError(try o.send("missing:", 1) as Int)
        }
        XCTAssertEqual(calls.current, 1, "the resolver declined once; later sends go straight to forwarding")
        XCTAssertFalse(o.responds(to: "missing:"))
        XCTAssertEqual(calls.current, 1)

        try cls.addMethod("unrelated") { (_: ObjectRef) -> Int in 0 }
        XCTAssertThrowsError(try o.send("missing:", 1) as Int)
        XCTAssertEqual(calls.current, 2, "adding a method flushes the declined entry")
        try base.addMethod("inBase") { (_: ObjectRef) -> Int in 0 }
        XCTAssertThrowsError(try o.send("missing:", 1) as Int)
        XCTAssertEqual(calls.current, 3, "so does a change in a superclass")
        XCTAssertThrowsError(try o.send("missing:", 1) as Int)
        XCTAssertEqual(calls.current, 3)
    }

    /// A new resolver is asked about what the previous one declined.
    func testReplacingTheResolverForgetsTheDeclinedAnswers() throws {
        let cls = try RuntimeClass(name: "CFDeclineReplaced")
        let first = try counting(cls)
        let o = try cls.createInstance()
        XCTAssertThrowsError(try o.send("triple:", 2) as Int)
        XCTAssertEqual(first.current, 1)
        let second = try counting(cls, adds: "triple:")
        XCTAssertEqual(try o.send("triple:", 2) as Int, 6)
        XCTAssertEqual(second.current, 1)
    }

    /// Introspection asks the resolver, as objc4 class_respondsToSelector and
    /// class_getMethodImplementation do.
    func testIntrospectionAsksTheResolver() throws {
        let cls = try RuntimeClass(name: "CFIntrospect")
        let calls = try counting(cls, adds: "triple:")
        XCTAssertTrue(cls.responds(to: "triple:"))
        XCTAssertEqual(calls.current, 1)
        XCTAssertNotNil(cls.ownMethod(for: "triple:"), "the resolver's method was added by the introspection")
        let imp = cls.methodImplementation(for: "triple:")
        XCTAssertNotEqual(imp, .forwarding)
        XCTAssertEqual(imp, cls.ownMethod(for: "triple:")?.implementation)
        XCTAssertEqual(calls.current, 1)

        XCTAssertEqual(cls.methodImplementation(for: "absent"), .forwarding)
        XCTAssertEqual(calls.current, 2)
        XCTAssertFalse(cls.responds(to: "absent"))
        XCTAssertFalse(try cls.createInstance().responds(to: "absent"))
        XCTAssertEqual(calls.current, 2, "the declined answer is cached for introspection too")

        // Class methods: resolveClassMethod:.
        try cls.setResolveClassMethod { c, sel in
            try c.metaclass.addMethod(sel) { (_: ObjectRef) -> Int in 9 }
            return true
        }
        XCTAssertTrue(cls.metaclass.responds(to: "nine"))
        XCTAssertTrue(cls.receiver.responds(to: "nine"))
        XCTAssertEqual(try cls.send("nine") as Int, 9)
    }

    /// A throwing resolver answers no to introspection, and nothing leaks out.
    func testAThrowingResolverAnswersNo() throws {
        let cls = try RuntimeClass(name: "CFResolveThrows")
        struct Boom: Error {}
        try cls.setResolveInstanceMethod { _, _ in throw Boom() }
        XCTAssertFalse(cls.responds(to: "x"))
        XCTAssertEqual(cls.methodImplementation(for: "x"), .forwarding)
        XCTAssertThrowsError(try cls.createInstance().send("x") as Int)
    }

    /// A method installed with the forwarding IMP forwards every call to
    /// forwardInvocation:, typed by its own entry (Aspects' technique).
    func testAMethodWhoseIMPIsTheForwardingIMPForwards() throws {
        let cls = try RuntimeClass(name: "CFForwardIMP")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let seen = Locked<[Int]>([])
        try cls.setForwardInvocation { inv in
            let a: Int = try inv.argument(at: 0), b: Int = try inv.argument(at: 1)
            seen.withLock { $0.append(a * 100 + b) }
            try inv.setReturnValue(a - b)
        }
        let original = try cls.replaceMethod("add:to:", implementation: .forwarding, types: "q@:qq")
        XCTAssertNotNil(original)
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("add:to:", 7, 2) as Int, 5)
        XCTAssertEqual(try o.send("add:to:", 9, 1).intValue, 8)
        typealias F = @convention(c) (sf_id, sf_sel, Int, Int) -> Int
        XCTAssertEqual(unsafeBitCast(IMP.forwarding.pointer, to: F.self)(o.raw, Selector("add:to:").raw, 3, 1), 2)
        XCTAssertEqual(seen.current, [702, 901, 301])
    }

    /// An error of the forwarding path reaches the Swift sender.
    func testAnErrorInsideTheForwardingIMPReachesTheSender() throws {
        let cls = try RuntimeClass(name: "CFForwardIMPThrows")
        struct Refused: Error {}
        try cls.setForwardInvocation { _ in throw Refused() }
        try cls.addMethod("value", implementation: .forwarding, types: "q@:")
        let o = try cls.createInstance()
        XCTAssertThrowsError(try o.send("value") as Int)
        XCTAssertEqual(try? o.send("value") as Int, nil)
        // Without forwardInvocation: the path ends in doesNotRecognizeSelector.
        let bare = try RuntimeClass(name: "CFForwardIMPBare")
        try bare.addMethod("value", implementation: .forwarding, types: "q@:")
        XCTAssertThrowsError(try bare.createInstance().send("value") as Int) { error in
            guard case .doesNotRecognizeSelector(let context)? = error as? RuntimeError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(context.className, "CFForwardIMPBare")
            XCTAssertEqual(context.selector, "value")
        }
    }
}

/// Lookups of objc4's API: class_getClassMethod, object_getMethodImplementation,
/// sel_lookUpByName.
final class ConformanceLookupTests: XCTestCase {
    func testClassMethodObjectIMPAndSelectorLookUp() throws {
        let base = try RuntimeClass(name: "CLBase")
        let sub = try RuntimeClass(name: "CLSub", superclass: base)
        try base.metaclass.addMethod("make") { (_: ObjectRef) -> Int in 3 }
        try base.addMethod("value") { (_: ObjectRef) -> Int in 4 }
        XCTAssertEqual(sub.classMethod(for: "make")?.selector, "make")
        // As in Objective-C, the root metaclass inherits from the root class.
        XCTAssertEqual(sub.classMethod(for: "value")?.implementation, base.ownMethod(for: "value")?.implementation)
        XCTAssertNil(sub.classMethod(for: "absentEverywhere"))
        XCTAssertNotNil(sf_class_getClassMethod(sub.raw, Selector("make").raw))
        XCTAssertNil(sf_class_getClassMethod(sub.raw, Selector("absentEverywhere").raw))

        let o = try sub.createInstance()
        XCTAssertEqual(sf_object_getMethodImplementation(o.raw, Selector("value").raw).map { IMP($0) },
                       base.ownMethod(for: "value")?.implementation)
        XCTAssertEqual(sf_object_getMethodImplementation(o.raw, Selector("absent").raw).map { IMP($0) }, IMP.forwarding)
        XCTAssertNil(sf_object_getMethodImplementation(nil, Selector("value").raw))

        let fresh = "clNeverRegistered\(UInt64.random(in: 0..<UInt64.max))"
        XCTAssertNil(Selector.lookUp(fresh))
        XCTAssertNil(fresh.withCString { sf_sel_lookUpName($0) })
        XCTAssertNil(Selector.lookUp(fresh), "looking up did not register it")
        let sel = Selector(fresh)
        XCTAssertEqual(Selector.lookUp(fresh), sel)
        XCTAssertEqual(fresh.withCString { sf_sel_lookUpName($0) }, sel.raw)
    }
}
