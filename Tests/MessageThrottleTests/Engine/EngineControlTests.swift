import TestSupport
import Foundation
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// Controlling applied rules: live edits while a message is pending, flush, cancel,
/// alwaysInvoke, the pending invocation and delayed errors. Discarding: EngineDiscardTests.
final class EngineControlTests: XCTestCase {
    private let d = Duration.milliseconds(100)

    /// A fixture, an instance and a rule on its `tick:` of window `d`.
    private func limited(_ mode: ThrottleMode, _ name: String = #function) throws -> (EngineFixture, Object, Rule) {
        let fx = try makeFixture(name)
        let obj = try fx.instance()
        return (fx, obj, try obj.limit("tick:", oncePer: d, mode: mode, in: fx.engine))
    }

    /// A fixture whose throttle rule (leading and trailing edges, window `d`) ran tick 1 at 0 and
    /// holds tick 2, sent at 10, at 20.
    private func heldSecondTick(_ name: String = #function) throws -> (EngineFixture, Object, Rule) {
        let (fx, obj, rule) = try limited(.throttle(leading: true, trailing: true), name)
        try fx.tick(obj, 1, at: 0)
        try fx.tick(obj, 2, at: 10)
        fx.advance(to: 20)
        return (fx, obj, rule)
    }

    // MARK: - live edits while a message is pending

    func testModeChangeWhilePendingPerformsTheOldMessageFirst() throws {
        // docs/modes.md: debounce d=100; mode := firstly at 20.
        let (fx, obj, rule) = try limited(.debounce)
        XCTAssertEqual(try fx.tick(obj, 1, at: 0), 0)
        fx.advance(to: 20)
        rule.mode = .firstly
        XCTAssertEqual(rule.mode, .firstly)
        XCTAssertNotNil(rule.pendingInvocation, "an edit changes nothing by itself")
        XCTAssertEqual(try fx.tick(obj, 2, at: 50), 20, "the first message under firstly is performed at once")
        XCTAssertEqual(fx.hits, [hit(1, 50), hit(2, 50)], "the old message first, on the caller's thread")
        XCTAssertEqual(fx.log.threads.map { pthread_equal($0, pthread_self()) != 0 }, [true, true])
        XCTAssertEqual(try fx.tick(obj, 3, at: 60), 0)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(1, 50), hit(2, 50)])
    }

    func testModeChangeWithoutAFurtherMessageKeepsTheOldDeadline() throws {
        let (fx, obj, rule) = try limited(.last)
        try fx.tick(obj, 1, at: 0)
        fx.advance(to: 10)
        rule.mode = .cooldown
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(1, 100)], "performed at its deadline, under the old rules")
        XCTAssertEqual(try fx.tick(obj, 2, at: 1000), 20, "the next message runs under cooldown")
    }

    func testShorterDurationWhilePendingPerformsAnOverdueMessageAtOnce() throws {
        let (fx, obj, rule) = try limited(.debounce)
        try fx.tick(obj, 1, at: 0)
        fx.advance(to: 10)
        rule.duration = .milliseconds(30)
        XCTAssertEqual(rule.duration, .milliseconds(30))
        try fx.tick(obj, 2, at: 40)
        XCTAssertEqual(fx.hits, [hit(1, 40)], "its window, re-evaluated under 30 ms, ended at 30")
        fx.advance(to: 69)
        XCTAssertEqual(fx.hits, [hit(1, 40)])
        fx.advance(to: 70)
        XCTAssertEqual(fx.hits, [hit(1, 40), hit(2, 70)], "the new message runs under 30 ms")
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits.count, 2)
    }

    func testShorterDurationWithoutAFurtherMessageKeepsTheOldDeadline() throws {
        let (fx, obj, rule) = try limited(.debounce)
        try fx.tick(obj, 1, at: 0)
        fx.advance(to: 10)
        rule.duration = .milliseconds(30)
        fx.advance(to: 99)
        XCTAssertEqual(fx.hits, [])
        fx.advance(to: 100)
        XCTAssertEqual(fx.hits, [hit(1, 100)])
    }

    func testLongerDurationWhilePendingMovesTheDeadline() throws {
        let (fx, obj, rule) = try limited(.debounce)
        try fx.tick(obj, 1, at: 0)
        fx.advance(to: 10)
        rule.duration = .milliseconds(300)
        try fx.tick(obj, 2, at: 50)
        fx.advance(to: 349)
        XCTAssertEqual(fx.hits, [], "the old timer re-checks at 100 and re-arms")
        fx.advance(to: 350)
        XCTAssertEqual(fx.hits, [hit(2, 350)])
    }

    func testDurationSetToZeroWhilePendingPerformsTheOldMessageThenEveryCall() throws {
        let (fx, obj, rule) = try limited(.last)
        try fx.tick(obj, 1, at: 0)
        rule.duration = .zero
        XCTAssertEqual(try fx.tick(obj, 2, at: 10), 20)
        XCTAssertEqual(fx.hits, [hit(1, 10), hit(2, 10)])
        XCTAssertEqual(try fx.tick(obj, 3, at: 10), 30)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(1, 10), hit(2, 10), hit(3, 10)])
    }

    func testEditsBeforeApplyingAreUsed() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = Rule(target: obj, selector: "tick:", duration: .seconds(5), mode: .debounce)
        rule.mode = .firstly
        rule.duration = .milliseconds(20)
        try rule.apply(in: fx.engine)
        XCTAssertEqual(try fx.tick(obj, 1, at: 0), 10)
        XCTAssertEqual(try fx.tick(obj, 2, at: 10), 0)
        XCTAssertEqual(try fx.tick(obj, 3, at: 20), 30)
    }

    // MARK: - flush and cancel

    func testFlushPerformsThePendingMessageNowOnTheCallingThread() throws {
        let (fx, obj, rule) = try heldSecondTick()
        XCTAssertTrue(rule.flush())
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(2, 20)], "performed before flush returns")
        XCTAssertTrue(pthread_equal(fx.log.threads[1], pthread_self()) != 0)
        XCTAssertNil(rule.pendingInvocation)
        XCTAssertFalse(rule.flush(), "nothing left")
        // The window closed with the flush: no new leading edge right after it.
        XCTAssertEqual(try fx.tick(obj, 3, at: 30), 0)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(2, 20), hit(3, 130)])
    }

    func testFlushWithNothingPendingIsANoOp() throws {
        let (fx, obj, rule) = try limited(.firstly)
        XCTAssertFalse(rule.flush())
        try fx.tick(obj, 1, at: 0)
        XCTAssertFalse(rule.flush())
        XCTAssertEqual(try fx.tick(obj, 2, at: 10), 0)
    }

    func testCancelDropsThePendingMessageAndRestartsTheWindow() throws {
        let (fx, obj, rule) = try heldSecondTick()
        rule.cancel()
        XCTAssertNil(rule.pendingInvocation)
        XCTAssertEqual(fx.clock.scheduledCount, 0, "the timer is cancelled")
        XCTAssertEqual(try fx.tick(obj, 3, at: 30), 30, "the next message is treated as the first")
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(3, 30)])
    }

    func testCancelEndsACooldown() throws {
        let (fx, obj, rule) = try limited(.cooldown)
        XCTAssertEqual(try fx.tick(obj, 1, at: 0), 10)
        XCTAssertEqual(try fx.tick(obj, 2, at: 10), 0)
        rule.cancel()
        XCTAssertEqual(try fx.tick(obj, 3, at: 20), 30)
    }

    func testFlushAndCancelOnARuleThatIsNotAppliedDoNothing() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = Rule(target: obj, selector: "tick:", duration: d)
        XCTAssertFalse(rule.flush())
        rule.cancel()
        XCTAssertNil(rule.pendingInvocation)
        XCTAssertNil(rule.lastResult)
        XCTAssertFalse(rule.isApplied)
        XCTAssertFalse(rule.discard())
    }

    // MARK: - alwaysInvoke

    func testAlwaysInvokeBypassesTheRuleWithoutBeingCounted() throws {
        let (fx, obj, rule) = try limited(.firstly)
        let seen = Locked<[Int]>([])
        // Weakly: the rule keeps its alwaysInvoke closure (a strong capture would be a cycle,
        // reported by LeakSanitizer).
        rule.alwaysInvoke = { [weak rule] r, call in
            XCTAssertTrue(r === rule)
            XCTAssertEqual(call.selector, "tick:")
            let arg = (try? call.argument(at: 0, as: Int.self)) ?? -1
            seen.withLock { $0.append(arg) }
            return arg >= 100
        }
        XCTAssertEqual(try fx.tick(obj, 100, at: 0), 1000, "bypassed: performed at once")
        XCTAssertEqual(try fx.tick(obj, 1, at: 1), 10, "the bypass did not open the window")
        XCTAssertEqual(try fx.tick(obj, 2, at: 2), 0)
        XCTAssertEqual(try fx.tick(obj, 101, at: 3), 1010, "bypassed inside the window")
        XCTAssertEqual(try fx.tick(obj, 3, at: 4), 0)
        XCTAssertEqual(fx.hits, [hit(100, 0), hit(1, 1), hit(101, 3)])
        XCTAssertEqual(seen.current, [100, 1, 2, 101, 3])
    }

    func testAlwaysInvokeDoesNotDisturbThePendingMessage() throws {
        let (fx, obj, rule) = try limited(.last)
        rule.alwaysInvoke = { _, call in ((try? call.argument(at: 0, as: Int.self)) ?? 0) < 0 }
        try fx.tick(obj, 1, at: 0)
        XCTAssertEqual(try fx.tick(obj, -5, at: 10), -50)
        XCTAssertEqual(try rule.pendingInvocation?.argument(at: 0, as: Int.self), 1)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(-5, 10), hit(1, 100)])
    }

    // MARK: - the pending invocation

    func testThePendingInvocationIsInspectable() throws {
        let (fx, obj, rule) = try limited(.debounce)
        XCTAssertNil(rule.pendingInvocation)
        try fx.tick(obj, 1, at: 0)
        try fx.tick(obj, 2, at: 10)
        let pending = try XCTUnwrap(rule.pendingInvocation)
        XCTAssertEqual(pending.target, obj.ref)
        XCTAssertEqual(pending.selector, "tick:")
        XCTAssertEqual(pending.signature.encoding, "q@:q")
        XCTAssertEqual(pending.argumentCount, 1)
        XCTAssertEqual(try pending.argument(at: 0, as: Int.self), 2)
        XCTAssertEqual(pending.argumentValues.map(\.intValue), [2])
        XCTAssertTrue(pending.argumentsRetained)
        fx.advance(to: 1000)
        XCTAssertNil(rule.pendingInvocation)
        XCTAssertEqual(fx.hits, [hit(2, 110)])
    }

    func testThePendingInvocationShowsObjectArguments() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("take:", oncePer: d, mode: .last, in: fx.engine)
        let arg = try fx.payload(9)
        try fx.take(obj, arg)
        let pending = try XCTUnwrap(rule.pendingInvocation)
        let value = try pending.argumentValue(at: 0)
        XCTAssertEqual(value.objectValue, arg)
        XCTAssertEqual(try value.objectValue?.value(ofIvar: "tag", as: Int.self), 9)
    }

    // MARK: - delayed errors

    func testErrorsOfDelayedMessagesGoToOnDelayedError() throws {
        let fx = try makeFixture()
        let failing = try RuntimeClass(name: uniqueClassName("Failing"))
        struct Boom: Error {}
        try failing.addMethod("fail:") { (_: ObjectRef, n: Int) -> Int in
            if n < 0 { throw Boom() }
            return n
        }
        let obj = try failing.createInstance()
        let rule = try obj.limit("fail:", oncePer: d, mode: .debounce, in: fx.engine)
        let errors = Locked<[String]>([])
        rule.onDelayedError = { e in errors.withLock { $0.append(String(describing: e)) } }
        XCTAssertEqual(try obj.send("fail:", -1, as: Int.self), 0)
        fx.advance(to: 1000)
        XCTAssertEqual(errors.current.count, 1)
        XCTAssertTrue(errors.current.first?.contains("fail:") ?? false, errors.current.first ?? "")
        // The rule keeps working.
        XCTAssertEqual(try obj.send("fail:", 5, as: Int.self), 0)
        fx.advance(to: 2000)
        XCTAssertEqual(errors.current.count, 1)
    }
}
