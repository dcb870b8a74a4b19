import TestSupport
import Foundation
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// A rule's settings that every message reads (`alwaysInvoke`, `suppressedReturn`)
/// are read without the rule's lock; an edit made while the rule is applied still takes effect
/// at the next message, and a captured call reuses the spare record.
final class EngineHotSettingsTests: XCTestCase {
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
        let cls = try RuntimeClass(name: uniqueClassName("Spare"))
        let seen = Locked<[Int]>([])
        try cls.addMethod("keep:") { (_: ObjectRef, n: Int) -> Int in
            seen.withLock { $0.append(n) }
            return n
        }
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
}
