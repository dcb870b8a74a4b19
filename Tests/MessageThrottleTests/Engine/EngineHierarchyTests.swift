import TestSupport
import Foundation
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// Rule targets and their precedence: instance rules beat class rules for their instance,
/// one rule per selector per class hierarchy, rules by class name and on class methods.
final class EngineHierarchyTests: XCTestCase {
    private let d = Duration.milliseconds(100)

    private func conflictOf(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> (target: String, existingOn: String, message: String)? {
        do {
            try body()
            XCTFail("no conflict thrown", file: file, line: line)
        } catch let error as ThrottleError {
            guard case let .conflictingRule(_, target, existingOn) = error else {
                XCTFail("\(error)", file: file, line: line)
                return nil
            }
            return (target, existingOn, error.description)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
        return nil
    }

    // MARK: - precedence

    func testAnInstanceRuleBeatsTheClassRuleForItsInstanceOnly() throws {
        let fx = try makeFixture()
        let a = try fx.instance()
        let b = try fx.instance()
        let c = try fx.instance()
        let classRule = try fx.cls.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        let instanceRule = try a.limit("tick:", oncePer: d, mode: .last, in: fx.engine)
        XCTAssertTrue(fx.engine.rule(for: a, selector: "tick:") === instanceRule)
        XCTAssertTrue(fx.engine.rule(for: b, selector: "tick:") === classRule)
        XCTAssertTrue(fx.engine.rule(for: c.ref, selector: "tick:") === classRule)
        XCTAssertNil(fx.engine.rule(for: a, selector: "other:"))

        // a follows its own rule (last): deferred, and its replay is not counted by the class rule.
        XCTAssertEqual(try fx.tick(a, 1, at: 0), 0)
        XCTAssertEqual(try fx.tick(a, 2, at: 10), 0)
        fx.advance(to: 100)
        XCTAssertEqual(fx.hits, [hit(2, 100)], "the class rule (firstly) let a's replay through")
        // The class window is still closed: b's first call is performed at once.
        XCTAssertEqual(try fx.tick(b, 3, at: 110), 30)
        XCTAssertEqual(try fx.tick(c, 4, at: 120), 0, "other instances share the class rule's window")
        // a's calls performed at once by its instance rule do not count either.
        instanceRule.mode = .firstly
        XCTAssertEqual(try fx.tick(a, 5, at: 300), 50)
        XCTAssertEqual(try fx.tick(b, 6, at: 301), 60, "a's call did not open the class window")
        XCTAssertEqual(fx.hits, [hit(2, 100), hit(3, 110), hit(5, 300), hit(6, 301)])

        // Without the instance rule, a follows the class rule again.
        instanceRule.discard()
        XCTAssertTrue(fx.engine.rule(for: a, selector: "tick:") === classRule)
        XCTAssertEqual(try fx.tick(a, 7, at: 302), 0)
        XCTAssertEqual(try fx.tick(a, 8, at: 500), 80)
    }

    func testAnInstanceRuleAppliedBeforeTheClassRuleAlsoWins() throws {
        let fx = try makeFixture()
        let a = try fx.instance()
        let b = try fx.instance()
        try a.limit("tick:", oncePer: d, mode: .debounce, in: fx.engine)
        try fx.cls.limit("tick:", oncePer: .seconds(10), mode: .throttle(leading: false, trailing: false), in: fx.engine)
        XCTAssertEqual(try fx.tick(b, 1, at: 0), 0, "the class rule drops everything")
        XCTAssertEqual(try fx.tick(a, 2, at: 0), 0)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(2, 100)], "a's rule performed its message past the class rule")
    }

    func testAClassRuleCoversSubclassInstances() throws {
        let fx = try makeFixture()
        let sub = try RuntimeClass(name: uniqueClassName("Sub"), superclass: fx.cls)
        let s = try sub.createInstance()
        let rule = try fx.cls.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        XCTAssertTrue(fx.engine.rule(for: s, selector: "tick:") === rule)
        XCTAssertEqual(try fx.tick(s, 1, at: 0), 10)
        XCTAssertEqual(try fx.tick(s, 2, at: 1), 0)
    }

    // MARK: - one rule per selector per hierarchy

    func testASubclassCannotHaveARuleWhenItsSuperclassHasOne() throws {
        let fx = try makeFixture()
        let sub = try RuntimeClass(name: uniqueClassName("Sub"), superclass: fx.cls)
        try fx.cls.limit("tick:", oncePer: d, in: fx.engine)
        let conflict = try XCTUnwrap(conflictOf { try sub.limit("tick:", oncePer: d, in: fx.engine) })
        XCTAssertEqual(conflict.existingOn, "instances of \(fx.cls.name)")
        XCTAssertEqual(conflict.target, "instances of \(sub.name)")
        XCTAssertTrue(conflict.message.contains(fx.cls.name), conflict.message)
        XCTAssertTrue(conflict.message.contains("tick:"), conflict.message)
        XCTAssertEqual(fx.engine.rules.count, 1)
        // Another selector is fine.
        XCTAssertNoThrow(try sub.limit("say:", oncePer: d, in: fx.engine))
    }

    func testASuperclassCannotHaveARuleWhenASubclassHasOne() throws {
        let fx = try makeFixture()
        let sub = try RuntimeClass(name: uniqueClassName("Sub"), superclass: fx.cls)
        let subsub = try RuntimeClass(name: uniqueClassName("SubSub"), superclass: sub)
        try subsub.limit("tick:", oncePer: d, in: fx.engine)
        let conflict = try XCTUnwrap(conflictOf { try fx.cls.limit("tick:", oncePer: d, in: fx.engine) })
        XCTAssertEqual(conflict.existingOn, "instances of \(subsub.name)")
        XCTAssertTrue(conflict.message.contains(subsub.name), conflict.message)
        // A sibling hierarchy is independent.
        let sibling = try RuntimeClass(name: uniqueClassName("Sibling"), superclass: fx.cls)
        XCTAssertNoThrow(try sibling.limit("tick:", oncePer: d, in: fx.engine))
        // Once the subclass rule is gone, the superclass can have one.
        let subRule = try XCTUnwrap(fx.engine.rules.first { $0.target.description == "instances of \(subsub.name)" })
        subRule.discard()
        fx.engine.rules.filter { $0.target.description == "instances of \(sibling.name)" }.forEach { $0.discard() }
        XCTAssertNoThrow(try fx.cls.limit("tick:", oncePer: d, in: fx.engine))
    }

    func testTheSameClassCannotHaveTwoRulesForOneSelector() throws {
        let fx = try makeFixture()
        try fx.cls.limit("tick:", oncePer: d, in: fx.engine)
        let conflict = try XCTUnwrap(conflictOf { try fx.cls.limit("tick:", oncePer: .seconds(1), mode: .last, in: fx.engine) })
        XCTAssertEqual(conflict.existingOn, "instances of \(fx.cls.name)")
    }

    func testTheOneRulePerHierarchyCheckSpansEngines() throws {
        let fx = try makeFixture()
        let sub = try RuntimeClass(name: uniqueClassName("Sub"), superclass: fx.cls)
        try fx.cls.limit("tick:", oncePer: d, in: fx.engine)
        let other = Engine(executor: fx.executor)
        let conflict = try XCTUnwrap(conflictOf { try sub.limit("tick:", oncePer: d, in: other) })
        XCTAssertEqual(conflict.existingOn, "instances of \(fx.cls.name)")
        XCTAssertTrue(other.rules.isEmpty)
    }

    func testMetaclassRulesConflictAlongTheHierarchy() throws {
        let fx = try makeFixture()
        let sub = try RuntimeClass(name: uniqueClassName("Sub"), superclass: fx.cls)
        try fx.cls.metaclass.limit("stamp:", oncePer: d, in: fx.engine)
        let conflict = try XCTUnwrap(conflictOf { try sub.metaclass.limit("stamp:", oncePer: d, in: fx.engine) })
        XCTAssertEqual(conflict.existingOn, "class \(fx.cls.name)")
        XCTAssertEqual(conflict.target, "class \(sub.name)")
        XCTAssertTrue(conflict.message.contains(fx.cls.name), conflict.message)

        // The other way round, in a fresh hierarchy.
        let fx2 = try makeFixture()
        let sub2 = try RuntimeClass(name: uniqueClassName("Sub"), superclass: fx2.cls)
        try sub2.metaclass.limit("stamp:", oncePer: d, in: fx2.engine)
        let conflict2 = try XCTUnwrap(conflictOf { try fx2.cls.metaclass.limit("stamp:", oncePer: d, in: fx2.engine) })
        XCTAssertEqual(conflict2.existingOn, "class \(sub2.name)")
    }

    func testClassMethodAndInstanceMethodRulesDoNotConflict() throws {
        let fx = try makeFixture()
        // An instance method and a class method with the same selector.
        try fx.cls.addMethod("stamp:") { (_: ObjectRef, n: Int) -> Int in n }
        XCTAssertNoThrow(try fx.cls.limit("stamp:", oncePer: d, in: fx.engine))
        XCTAssertNoThrow(try fx.cls.metaclass.limit("stamp:", oncePer: d, in: fx.engine))
        XCTAssertEqual(fx.engine.rules.count, 2)
    }

    func testInstanceRulesOnlyConflictOnTheSameObject() throws {
        let fx = try makeFixture()
        let a = try fx.instance()
        let b = try fx.instance()
        try a.limit("tick:", oncePer: d, in: fx.engine)
        XCTAssertNoThrow(try b.limit("tick:", oncePer: d, in: fx.engine), "another object")
        XCTAssertNoThrow(try fx.cls.limit("tick:", oncePer: d, in: fx.engine), "a class rule")
        XCTAssertNoThrow(try a.limit("say:", oncePer: d, in: fx.engine), "another selector")
        let conflict = try XCTUnwrap(conflictOf { try a.limit("tick:", oncePer: .seconds(1), mode: .firstly, in: fx.engine) })
        XCTAssertTrue(conflict.existingOn.contains(fx.cls.name), conflict.existingOn)
        XCTAssertEqual(conflict.existingOn, conflict.target, "the same object")
        // Through an ObjectRef for the same object, too.
        XCTAssertNotNil(conflictOf { try a.ref.limit("tick:", oncePer: d, in: Engine(executor: fx.executor)) })
        XCTAssertEqual(fx.engine.rules.count, 4)
    }

    // MARK: - rules by class name

    func testLimitByClassName() throws {
        let fx = try makeFixture()
        let a = try fx.instance()
        let rule = try fx.engine.limit(className: fx.cls.name, "tick:", oncePer: d, mode: .firstly)
        guard case let .instances(cls) = rule.target else { return XCTFail("\(rule.target)") }
        XCTAssertTrue(cls === fx.cls)
        XCTAssertTrue(rule.isApplied)
        XCTAssertEqual(try fx.tick(a, 1, at: 0), 10)
        XCTAssertEqual(try fx.tick(a, 2, at: 1), 0)
        // Class methods by name.
        let classRule = try fx.engine.limit(className: fx.cls.name, "stamp:", oncePer: d, mode: .firstly, classMethod: true)
        guard case .classMethods = classRule.target else { return XCTFail("\(classRule.target)") }
        XCTAssertEqual(try fx.cls.send("stamp:", 1, as: Int.self), 100)
        XCTAssertEqual(try fx.cls.send("stamp:", 2, as: Int.self), 0)
    }

    func testLimitByAnUnknownClassNameThrows() throws {
        let name = uniqueClassName("NoSuchClass")
        XCTAssertThrowsError(try Engine.shared.limit(className: name, "tick:", oncePer: d)) { error in
            guard case let .runtime(inner)? = error as? ThrottleError else { return XCTFail("\(error)") }
            XCTAssertTrue(inner.description.contains(name), inner.description)
        }
    }

    func testAnUnknownSelectorIsARuntimeError() throws {
        let fx = try makeFixture()
        let a = try fx.instance()
        XCTAssertThrowsError(try fx.cls.limit("nothing:", oncePer: d, in: fx.engine)) { error in
            guard case .runtime? = error as? ThrottleError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try a.limit("nothing:", oncePer: d, in: fx.engine))
        XCTAssertTrue(fx.engine.rules.isEmpty)
        XCTAssertEqual(try fx.tick(a, 1, at: 0), 10)
    }

    // MARK: - class methods

    func testClassMethodRulesThroughTheMetaclass() throws {
        let fx = try makeFixture()
        let rule = try fx.cls.metaclass.limit("stamp:", oncePer: d, mode: .last, in: fx.engine)
        guard case let .classMethods(cls) = rule.target else { return XCTFail("\(rule.target)") }
        XCTAssertTrue(cls === fx.cls)
        XCTAssertTrue(fx.engine.rule(for: fx.cls, selector: "stamp:") === rule)
        XCTAssertTrue(fx.engine.rule(for: fx.cls.metaclass, selector: "stamp:") === rule)
        for (i, ms) in [0, 30, 60].enumerated() {
            fx.advance(to: ms)
            XCTAssertEqual(try fx.cls.send("stamp:", i + 1, as: Int.self), 0)
        }
        fx.advance(to: 1000)
        XCTAssertEqual(fx.log.classHits, [hit(3, 100)])
        // Instance methods are untouched.
        let a = try fx.instance()
        XCTAssertEqual(try fx.tick(a, 1, at: 1000), 10)
        XCTAssertEqual(try fx.tick(a, 2, at: 1000), 20)
        // A subclass's class method is covered too (it inherits it).
        let sub = try RuntimeClass(name: uniqueClassName("Sub"), superclass: fx.cls)
        XCTAssertTrue(fx.engine.rule(for: sub, selector: "stamp:") === rule)
        XCTAssertEqual(try sub.send("stamp:", 9, as: Int.self), 0)
        fx.advance(to: 2000)
        XCTAssertEqual(fx.log.classHits, [hit(3, 100), hit(9, 1100)])
        rule.discard()
        XCTAssertEqual(try fx.cls.send("stamp:", 4, as: Int.self), 400)
    }

    /// An instance rule's pending message was captured while a class rule hooked the method;
    /// the class rule is discarded before the replay.
    func testAnInstanceRuleReplayAfterTheClassRuleWasDiscarded() throws {
        let fx = try makeFixture()
        let a = try fx.instance()
        let b = try fx.instance()
        let classRule = try fx.cls.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        try a.limit("tick:", oncePer: d, mode: .last, in: fx.engine)
        XCTAssertEqual(try fx.tick(a, 1, at: 0), 0)
        XCTAssertTrue(classRule.discard())
        collectRuntimeGarbage()
        // Churn the heap so that freed memory gets reused.
        var junk: [AnyObject] = []
        for i in 0..<2000 { junk.append(NSString(string: "junk \(i)")); junk.append(try fx.payload(i)) }
        XCTAssertEqual(try fx.tick(b, 2, at: 10), 20, "the class rule is gone")
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(2, 10), hit(1, 100)])
        XCTAssertEqual(try fx.tick(b, 3, at: 1000), 30)
        withExtendedLifetime(junk) {}
    }
}
