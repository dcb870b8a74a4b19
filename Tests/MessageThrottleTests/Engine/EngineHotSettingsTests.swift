import TestSupport
import Foundation
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// A rule's settings that every message reads (`alwaysInvoke`, `suppressedReturn`)
/// are read without the rule's lock; an edit made while the rule is applied still takes effect
/// at the next message, and a captured call reuses the spare record.
final class EngineHotSettingsTests: XCTestCase {
    /// A class whose `keep:` records each argument it is performed with.
    private func keepClass(_ name: String) throws -> (RuntimeClass, Locked<[Int]>) {
        let cls = try RuntimeClass(name: uniqueClassName(name))
        let seen = Locked<[Int]>([])
        try cls.addMethod("keep:") { (_: ObjectRef, n: Int) -> Int in
            seen.withLock { $0.append(n) }
            return n
        }
        return (cls, seen)
    }

    func testEditsOfAnAppliedRuleTakeEffectAtTheNextMessage() throws {
        let fx = try makeFixture()
        let cls = try RuntimeClass(name: uniqueClassName("Hot"))
        let calls = Locked(0)
        try cls.addMethod("twice:") { (_: ObjectRef, n: Int) -> Int in
            calls.withLock { $0 += 1 }
            return n * 2
        }
        let o = try cls.createInstance()
        let rule = try o.limit("twice:", oncePer: .seconds(10), mode: .firstly, in: fx.engine)
        XCTAssertEqual(try o.send("twice:", 5, as: Int.self), 10)
        XCTAssertEqual(try o.send("twice:", 5, as: Int.self), 0, "dropped: zero")
        rule.suppressedReturn = .value(.int64(-1))
        XCTAssertEqual(try o.send("twice:", 5, as: Int.self), -1, "dropped: the fixed value")
        rule.suppressedReturn = .lastResult
        XCTAssertEqual(try o.send("twice:", 5, as: Int.self), 0, "no result kept before .lastResult was set")
        rule.alwaysInvoke = { _, ctx in (try? ctx.argument(at: 0, as: Int.self)) == 7 }
        XCTAssertEqual(try o.send("twice:", 7, as: Int.self), 14, "let through by alwaysInvoke")
        XCTAssertEqual(try o.send("twice:", 5, as: Int.self), 14, "dropped: the last result")
        rule.alwaysInvoke = nil
        rule.suppressedReturn = .zero
        XCTAssertEqual(try o.send("twice:", 7, as: Int.self), 0)
        XCTAssertEqual(calls.current, 2)
    }

    func testCapturedCallsReuseOneSpareRecord() throws {
        let fx = try makeFixture()
        let (cls, seen) = try keepClass("Spare")
        let o = try cls.createInstance()
        let rule = try o.limit("keep:", oncePer: .seconds(1), mode: .last, in: fx.engine)
        var records: Set<ObjectIdentifier> = []
        for i in 0..<50 {
            XCTAssertEqual(try o.send("keep:", i, as: Int.self), 0)
            if let p = rule.pendingInvocation { records.insert(ObjectIdentifier(p.storage)) }
        }
        XCTAssertLessThanOrEqual(records.count, 3, "steady state alternates between two records")
        fx.clock.advance(by: .seconds(1))
        XCTAssertEqual(seen.current, [49], "only the last call is performed, with its own argument")
    }

    /// Calls of one target whose arguments are all scalars rewrite the held record in place:
    /// one record for the whole window, nothing retained or released per call.
    func testCapturedCallsOfOneTargetRefillTheHeldRecord() throws {
        let fx = try makeFixture()
        let cls = try RuntimeClass(name: uniqueClassName("Refill"))
        let seen = Locked<[Int]>([])
        try cls.addMethod("keep:and:") { (_: ObjectRef, n: Int, m: Int) -> Int in
            seen.withLock { $0.append(n * 1000 + m) }
            return n
        }
        let o = try cls.createInstance()
        let rule = try o.limit("keep:and:", oncePer: .seconds(1), mode: .last, in: fx.engine)
        var records: Set<ObjectIdentifier> = []
        for i in 0..<50 {
            XCTAssertEqual(try o.send("keep:and:", i, i + 1, as: Int.self), 0)
            if let p = rule.pendingInvocation { records.insert(ObjectIdentifier(p.storage)) }
        }
        XCTAssertEqual(records.count, 1, "refilled in place")
        XCTAssertEqual(o.retainCount, 2, "the caller and the held record")
        fx.clock.advance(by: .seconds(1))
        XCTAssertEqual(seen.current, [49_050], "the last call, with its own arguments")
        XCTAssertEqual(o.retainCount, 1, "the performed record let go of its target")
    }

    /// A pending invocation someone else holds is never rewritten: the next call is captured
    /// into another record, and the one held keeps its arguments.
    func testAHeldPendingInvocationKeepsItsArguments() throws {
        let fx = try makeFixture()
        let (cls, seen) = try keepClass("RefillHeld")
        let o = try cls.createInstance()
        let rule = try o.limit("keep:", oncePer: .seconds(1), mode: .debounce, in: fx.engine)
        XCTAssertEqual(try o.send("keep:", 1, as: Int.self), 0)
        XCTAssertEqual(try o.send("keep:", 2, as: Int.self), 0)
        let held = try XCTUnwrap(rule.pendingInvocation)
        XCTAssertEqual(try held.argument(at: 0, as: Int.self), 2)
        XCTAssertEqual(try o.send("keep:", 3, as: Int.self), 0)
        XCTAssertEqual(try o.send("keep:", 4, as: Int.self), 0)
        XCTAssertEqual(try held.argument(at: 0, as: Int.self), 2, "not rewritten while held")
        XCTAssertEqual(try rule.pendingInvocation.map { try $0.argument(at: 0, as: Int.self) }, 4)
        fx.clock.advance(by: .seconds(1))
        XCTAssertEqual(seen.current, [4])
    }

    /// Calls alternating between two targets cannot refill (the target would change): each is
    /// swapped in, only the last is performed, and neither target outlives the window.
    func testCallsOfAnotherTargetAreSwappedIn() throws {
        let fx = try makeFixture()
        let cls = try RuntimeClass(name: uniqueClassName("RefillTargets"), ivars: [("tag", .int64)])
        let seen = Locked<[Int]>([])
        try cls.addMethod("keep:") { (me: ObjectRef, n: Int) -> Int in
            seen.withLock { $0.append(n * 10 + ((try? me.value(ofIvar: "tag", as: Int.self)) ?? -1)) }
            return n
        }
        let a = try cls.createInstance(), b = try cls.createInstance()
        try a.setValue(1, forIvar: "tag")
        try b.setValue(2, forIvar: "tag")
        _ = try cls.limit("keep:", oncePer: .seconds(1), mode: .last, in: fx.engine)
        for i in 0..<20 {
            XCTAssertEqual(try (i % 2 == 0 ? a : b).send("keep:", i, as: Int.self), 0)
        }
        XCTAssertEqual(a.retainCount + b.retainCount, 3, "one held record, one spare emptied")
        fx.clock.advance(by: .seconds(1))
        XCTAssertEqual(seen.current, [192], "b's last call")
        XCTAssertEqual(a.retainCount, 1)
        XCTAssertEqual(b.retainCount, 1)
    }

    /// The original is read again for a refilled call once it has changed: the method replaced
    /// while a call is held, the refilled call performs the new implementation.
    func testARefilledCallPerformsTheCurrentOriginal() throws {
        let fx = try makeFixture()
        let cls = try RuntimeClass(name: uniqueClassName("RefillOriginal"))
        let seen = Locked<[String]>([])
        try cls.addMethod("keep:") { (_: ObjectRef, n: Int) -> Int in
            seen.withLock { $0.append("old \(n)") }
            return n
        }
        let o = try cls.createInstance()
        _ = try o.limit("keep:", oncePer: .seconds(1), mode: .last, in: fx.engine)
        XCTAssertEqual(try o.send("keep:", 1, as: Int.self), 0)
        XCTAssertEqual(try o.send("keep:", 2, as: Int.self), 0)
        try cls.replaceMethod("keep:") { (_: ObjectRef, n: Int) -> Int in
            seen.withLock { $0.append("new \(n)") }
            return n
        }
        XCTAssertEqual(try o.send("keep:", 3, as: Int.self), 0)
        fx.clock.advance(by: .seconds(1))
        XCTAssertEqual(seen.current, ["new 3"])
    }
}
