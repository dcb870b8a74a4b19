import TestSupport
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// Class rules for one selector on a superclass and a subclass: refused unless the engines
/// opt in (`allowsRulesOnEveryLevel`); then each level limits its own calls, super calls
/// included. Virtual time throughout.
final class EngineLevelsTests: XCTestCase {
    private let second = Duration.seconds(1)
    private let tenth = Duration.milliseconds(100)

    private func isConflict(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch let error as ThrottleError {
            if case .conflictingRule = error { return true }
            XCTFail("\(error)")
        } catch {
            XCTFail("\(error)")
        }
        return false
    }

    func testRefusedByDefaultAndUnlessBothEnginesOptIn() throws {
        let fx = try makeFixture()
        let sub = try RuntimeClass(name: uniqueClassName("LevelSub"), superclass: fx.cls)
        XCTAssertFalse(fx.engine.allowsRulesOnEveryLevel)
        try fx.cls.limit("tick:", oncePer: second, in: fx.engine)
        XCTAssertTrue(isConflict { try sub.limit("tick:", oncePer: tenth, in: fx.engine) })
        let optedIn = Engine(executor: fx.executor)
        optedIn.allowsRulesOnEveryLevel = true
        XCTAssertTrue(isConflict { try sub.limit("tick:", oncePer: tenth, in: optedIn) },
                      "the superclass's rule belongs to an engine that did not opt in")
        XCTAssertTrue(optedIn.rules.isEmpty)
    }

    func testTheSameClassStillTakesOneRulePerSelector() throws {
        let fx = try makeFixture()
        fx.engine.allowsRulesOnEveryLevel = true
        try fx.cls.limit("tick:", oncePer: second, in: fx.engine)
        XCTAssertTrue(isConflict { try fx.cls.limit("tick:", oncePer: tenth, mode: .last, in: fx.engine) })
        try fx.cls.metaclass.limit("stamp:", oncePer: second, in: fx.engine)
        XCTAssertTrue(isConflict { try fx.cls.metaclass.limit("stamp:", oncePer: tenth, in: fx.engine) })
    }

    func testEachLevelLimitsItsOwnCallsAndTheOverridesSuperCalls() throws {
        let fx = try makeFixture()
        fx.engine.allowsRulesOnEveryLevel = true
        let sub = try RuntimeClass(name: uniqueClassName("LevelSub"), superclass: fx.cls)
        let log = fx.log
        try sub.addMethod("tick:") { (me: ObjectRef, n: Int) -> Int in
            log.string("sub \(n)")
            return try me.asSuper(of: sub).send("tick:", n, as: Int.self)
        }
        let s = try sub.createInstance()
        let b = try fx.instance()
        let baseRule = try fx.cls.limit("tick:", oncePer: second, mode: .firstly, in: fx.engine)
        let subRule = try sub.limit("tick:", oncePer: tenth, mode: .firstly, in: fx.engine)
        XCTAssertTrue(fx.engine.rule(for: s, selector: "tick:") === subRule, "the nearest level's rule")
        XCTAssertTrue(fx.engine.rule(for: b, selector: "tick:") === baseRule)

        XCTAssertEqual(try fx.tick(s, 1, at: 0), 10, "both levels' windows open")
        XCTAssertEqual(try fx.tick(b, 2, at: 0), 0, "the super call opened the superclass's window")
        XCTAssertEqual(try fx.tick(s, 3, at: 150), 0, "the subclass's window passed it; the superclass's dropped it")
        XCTAssertEqual(try fx.tick(s, 4, at: 160), 0, "the subclass's own window")
        XCTAssertEqual(try fx.tick(s, 5, at: 1100), 50)
        XCTAssertEqual(fx.log.strings, ["sub 1", "sub 3", "sub 5"])
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(5, 1100)])
    }

    func testAnInheritedMethodPassesTheSubclassRuleThenTheSuperclassRule() throws {
        let fx = try makeFixture()
        fx.engine.allowsRulesOnEveryLevel = true
        let sub = try RuntimeClass(name: uniqueClassName("LevelSub"), superclass: fx.cls)
        let s = try sub.createInstance()
        let b = try fx.instance()
        // Applied the other way round: the subclass first.
        try sub.limit("tick:", oncePer: tenth, mode: .debounce, in: fx.engine)
        try fx.cls.limit("tick:", oncePer: second, mode: .firstly, in: fx.engine)

        XCTAssertEqual(try fx.tick(s, 1, at: 0), 0)
        XCTAssertEqual(try fx.tick(s, 2, at: 50), 0)
        fx.advance(to: 150)
        XCTAssertEqual(fx.hits, [hit(2, 150)], "debounced by the subclass, then let through by the superclass")
        XCTAssertEqual(try fx.tick(b, 3, at: 200), 0, "the superclass's window counts the subclass's call")
        XCTAssertEqual(try fx.tick(s, 4, at: 300), 0)
        fx.advance(to: 500)
        XCTAssertEqual(fx.hits, [hit(2, 150)], "the debounced call reached the superclass in its window")
        XCTAssertEqual(try fx.tick(b, 5, at: 1200), 50)
        XCTAssertEqual(fx.hits, [hit(2, 150), hit(5, 1200)])
    }

    func testClassMethodRulesOnEveryLevel() throws {
        let fx = try makeFixture()
        fx.engine.allowsRulesOnEveryLevel = true
        let sub = try RuntimeClass(name: uniqueClassName("LevelSub"), superclass: fx.cls)
        try fx.cls.metaclass.limit("stamp:", oncePer: second, mode: .firstly, in: fx.engine)
        try sub.metaclass.limit("stamp:", oncePer: tenth, mode: .firstly, in: fx.engine)
        XCTAssertEqual(try sub.send("stamp:", 1, as: Int.self), 100)
        XCTAssertEqual(try fx.cls.send("stamp:", 2, as: Int.self), 0)
        fx.advance(to: 150)
        XCTAssertEqual(try sub.send("stamp:", 3, as: Int.self), 0, "the subclass's level passed, the superclass's dropped")
        XCTAssertEqual(fx.log.classHits, [hit(1, 0)])
    }
}
