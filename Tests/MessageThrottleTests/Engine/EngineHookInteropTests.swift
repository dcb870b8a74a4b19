import TestSupport
import CDynamicRuntime
import Foundation
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// The engine's hooks among other hooks: discarding a rule restores the exact original IMP
/// only when no other hook remains, and a user's own hooks keep working.
final class EngineHookInteropTests: XCTestCase {
    private let d = Duration.milliseconds(100)

    private func imp(_ cls: RuntimeClass, _ sel: Selector) -> IMP? { cls.ownMethod(for: sel)?.implementation }

    func testDiscardingAClassRuleRestoresTheExactOriginalIMP() throws {
        for mode in allEngineModes {
            let fx = try makeFixture()
            let obj = try fx.instance()
            let original = try XCTUnwrap(imp(fx.cls, "tick:"))
            let rule = try fx.cls.limit("tick:", oncePer: d, mode: mode, in: fx.engine)
            XCTAssertNotEqual(imp(fx.cls, "tick:"), original, "\(mode): the trampoline is installed")
            try fx.tick(obj, 1, at: 0)
            try fx.tick(obj, 2, at: 10)
            rule.discard(pending: .flush)
            XCTAssertEqual(imp(fx.cls, "tick:"), original, "\(mode)")
            XCTAssertEqual(try fx.tick(obj, 3, at: 20), 30, "\(mode)")
            XCTAssertEqual(try fx.tick(obj, 4, at: 20), 40, "\(mode)")
        }
    }

    func testDiscardingAClassMethodRuleRestoresTheExactOriginalIMP() throws {
        let fx = try makeFixture()
        let original = try XCTUnwrap(imp(fx.cls.metaclass, "stamp:"))
        let rule = try fx.cls.metaclass.limit("stamp:", oncePer: d, mode: .firstly, in: fx.engine)
        XCTAssertNotEqual(imp(fx.cls.metaclass, "stamp:"), original)
        XCTAssertEqual(imp(fx.cls, "stamp:"), nil, "instance methods are untouched")
        rule.discard()
        XCTAssertEqual(imp(fx.cls.metaclass, "stamp:"), original)
    }

    func testARuleOnASubclassOfTheImplementingClassLeavesTheSuperclassAlone() throws {
        let fx = try makeFixture()
        let sub = try RuntimeClass(name: uniqueClassName("Sub"), superclass: fx.cls)
        let s = try sub.createInstance()
        let a = try fx.instance()
        let original = try XCTUnwrap(imp(fx.cls, "tick:"))
        XCTAssertNil(imp(sub, "tick:"))
        let rule = try sub.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        XCTAssertNotNil(imp(sub, "tick:"), "the subclass gets its own entry")
        XCTAssertEqual(imp(fx.cls, "tick:"), original, "the superclass is untouched")
        XCTAssertEqual(try fx.tick(s, 1, at: 0), 10)
        XCTAssertEqual(try fx.tick(s, 2, at: 1), 0)
        XCTAssertEqual(try fx.tick(a, 3, at: 2), 30, "superclass instances are not limited")
        XCTAssertEqual(try fx.tick(a, 4, at: 3), 40)
        rule.discard()
        XCTAssertNil(imp(sub, "tick:"), "the entry is removed again")
        XCTAssertEqual(imp(fx.cls, "tick:"), original)
        XCTAssertEqual(try fx.tick(s, 5, at: 4), 50)
    }

    func testADiscardedInstanceRuleLeavesNoSideTableAndKeepsAssociations() throws {
        let fx = try makeFixture()
        let a = try fx.instance()
        let b = try fx.instance()
        let key = AssociationKey("engine.side")
        b.setAssociatedValue("kept", for: key)
        let ra = try a.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        let rb = try b.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        XCTAssertNotNil(sf_object_side(a.raw))
        XCTAssertEqual(try fx.tick(a, 1, at: 0), 10)
        XCTAssertEqual(try fx.tick(a, 2, at: 1), 0)
        ra.discard()
        rb.discard()
        XCTAssertNil(sf_object_side(a.raw), "the rule's hook and dealloc observer were all its table held")
        XCTAssertEqual(sf_object_isa(a.raw), fx.cls.raw)
        XCTAssertEqual(b.associatedValue(for: key) as? String, "kept")
        XCTAssertEqual(try fx.tick(a, 3, at: 2), 30)
        XCTAssertEqual(try fx.tick(b, 4, at: 3), 40)
    }

    func testAnInstanceRuleNeverTouchesTheClassesMethod() throws {
        let fx = try makeFixture()
        let a = try fx.instance()
        let original = try XCTUnwrap(imp(fx.cls, "tick:"))
        let rule = try a.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        XCTAssertEqual(imp(fx.cls, "tick:"), original)
        XCTAssertEqual(a.runtimeClass, fx.cls, "the hidden class is not visible")
        rule.discard()
        XCTAssertEqual(imp(fx.cls, "tick:"), original)
        XCTAssertEqual(a.runtimeClass, fx.cls)
        XCTAssertEqual(try fx.tick(a, 1, at: 0), 10)
        XCTAssertEqual(try fx.tick(a, 2, at: 0), 20)
    }

    /// The user hooked the method first; the rule comes and goes; the user's hook stays.
    func testAUsersOwnHookSurvivesTheRule() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let original = try XCTUnwrap(imp(fx.cls, "tick:"))
        let seen = Locked<[Int]>([])
        let userHook = try fx.cls.hook("tick:", .before) { ctx in
            seen.withLock { $0.append((try? ctx.argument(at: 0, as: Int.self)) ?? -1) }
        }
        let hooked = try XCTUnwrap(imp(fx.cls, "tick:"))
        let rule = try fx.cls.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        XCTAssertEqual(imp(fx.cls, "tick:"), hooked, "one trampoline per method, shared")
        XCTAssertEqual(try fx.tick(obj, 1, at: 0), 10)
        XCTAssertEqual(try fx.tick(obj, 2, at: 1), 0)
        XCTAssertEqual(seen.current, [1, 2], "before hooks see every call")
        XCTAssertTrue(rule.discard())
        XCTAssertNotEqual(imp(fx.cls, "tick:"), original, "not restored: the user's hook remains")
        XCTAssertTrue(userHook.isActive)
        XCTAssertEqual(try fx.tick(obj, 3, at: 2), 30, "no longer limited")
        XCTAssertEqual(try fx.tick(obj, 4, at: 3), 40)
        XCTAssertEqual(seen.current, [1, 2, 3, 4], "the user's hook still runs")
        XCTAssertTrue(userHook.remove())
        XCTAssertEqual(imp(fx.cls, "tick:"), original, "restored once the last hook is gone")
        XCTAssertEqual(try fx.tick(obj, 5, at: 4), 50)
        XCTAssertEqual(seen.current, [1, 2, 3, 4])
    }

    /// The user hooks the method while the rule is applied; discarding the rule leaves it.
    func testAUsersHookAddedAfterTheRuleSurvivesIt() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let original = try XCTUnwrap(imp(fx.cls, "tick:"))
        let rule = try fx.cls.limit("tick:", oncePer: d, mode: .last, in: fx.engine)
        let results = Locked<[Int]>([])
        let userHook = try fx.cls.hook("tick:", .after) { ctx in
            results.withLock { $0.append((try? ctx.returnValue(as: Int.self)) ?? -1) }
        }
        try fx.tick(obj, 1, at: 0)
        fx.advance(to: 100)
        XCTAssertEqual(fx.hits, [hit(1, 100)])
        XCTAssertEqual(results.current, [0], "after hooks see the suppressed return")
        rule.discard()
        XCTAssertEqual(try fx.tick(obj, 2, at: 200), 20)
        XCTAssertEqual(results.current, [0, 20])
        userHook.remove()
        XCTAssertEqual(imp(fx.cls, "tick:"), original)
    }

    /// A user's instead hook older than the rule: the rule (newest) runs first and decides;
    /// what it lets through at once goes on through the user's hook.
    func testAUsersInsteadHookBehindTheRule() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let original = try XCTUnwrap(imp(fx.cls, "tick:"))
        let userHook = try fx.cls.hook("tick:", .instead) { ctx in
            try ctx.proceed()
            try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 1)
        }
        let rule = try fx.cls.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        XCTAssertEqual(try fx.tick(obj, 1, at: 0), 11)
        XCTAssertEqual(try fx.tick(obj, 2, at: 1), 0)
        rule.discard()
        XCTAssertEqual(try fx.tick(obj, 3, at: 2), 31)
        userHook.remove()
        XCTAssertEqual(imp(fx.cls, "tick:"), original)
        XCTAssertEqual(try fx.tick(obj, 4, at: 3), 40)
    }

    /// A user's per-object hook and an instance rule on the same object.
    func testAUsersPerObjectHookSurvivesAnInstanceRule() throws {
        let fx = try makeFixture()
        let a = try fx.instance()
        let count = Locked(0)
        let userHook = try a.hook("tick:", .before) { _ in count.withLock { $0 += 1 } }
        let rule = try a.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        XCTAssertEqual(try fx.tick(a, 1, at: 0), 10)
        XCTAssertEqual(try fx.tick(a, 2, at: 1), 0)
        rule.discard()
        XCTAssertEqual(try fx.tick(a, 3, at: 2), 30)
        XCTAssertEqual(try fx.tick(a, 4, at: 3), 40)
        XCTAssertEqual(count.current, 4)
        XCTAssertTrue(userHook.isActive)
        userHook.remove()
        XCTAssertEqual(try fx.tick(a, 5, at: 4), 50)
        XCTAssertEqual(count.current, 4)
    }

    func testApplyingAndDiscardingManyTimesLeavesNoClosuresBehind() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let original = try XCTUnwrap(imp(fx.cls, "tick:"))
        // Warm up once (lazily created runtime state).
        try fx.cls.limit("tick:", oncePer: d, mode: .last, in: fx.engine).discard()
        collectRuntimeGarbage()
        let closures = Runtime.liveClosureCount
        let objects = Runtime.liveObjectCount
        for i in 0..<50 {
            let rule = try fx.cls.limit("tick:", oncePer: d, mode: allEngineModes[i % allEngineModes.count], in: fx.engine)
            try fx.tick(obj, i, at: i * 10)
            try fx.tick(obj, i, at: i * 10 + 1)
            rule.discard(pending: i % 2 == 0 ? .flush : .cancel)
        }
        collectRuntimeGarbage()
        XCTAssertEqual(imp(fx.cls, "tick:"), original)
        XCTAssertEqual(Runtime.liveClosureCount, closures, "every trampoline freed")
        XCTAssertEqual(Runtime.liveObjectCount, objects)
        XCTAssertEqual(fx.clock.scheduledCount, 0)
    }
}
