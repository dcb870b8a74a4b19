import TestSupport
import Foundation
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// Discarding applied rules: with a pending message (flush or cancel), with a sender inside
/// the hook meanwhile (KB-4), twice, on another engine, all at once; and a message that
/// discards its own rule.
final class EngineDiscardTests: XCTestCase {
    private let d = Duration.milliseconds(100)

    // MARK: - discard

    func testDiscardWithFlushPerformsThePendingMessageAndRestoresTheMethod() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, mode: .last, in: fx.engine)
        try fx.tick(obj, 1, at: 0)
        try fx.tick(obj, 2, at: 10)
        fx.advance(to: 20)
        XCTAssertTrue(rule.discard(pending: .flush))
        XCTAssertEqual(fx.hits, [hit(2, 20)], "performed during discard, on this thread")
        XCTAssertTrue(pthread_equal(fx.log.threads[0], pthread_self()) != 0)
        XCTAssertFalse(rule.isApplied)
        XCTAssertNil(rule.pendingInvocation)
        XCTAssertEqual(try fx.tick(obj, 3, at: 30), 30, "no rule any more")
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(2, 20), hit(3, 30)])
    }

    func testDiscardWithCancelDropsThePendingMessage() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, mode: .last, in: fx.engine)
        try fx.tick(obj, 1, at: 0)
        try fx.tick(obj, 2, at: 10)
        XCTAssertTrue(fx.engine.discard(rule, pending: .cancel))
        XCTAssertEqual(fx.clock.scheduledCount, 0)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [])
        XCTAssertEqual(try fx.tick(obj, 3, at: 1000), 30)
        XCTAssertEqual(fx.hits, [hit(3, 1000)])
    }

    // MARK: - a sender inside the hook while the rule is discarded (KB-4)

    /// A sender defers its message while `discard(pending: .flush)` is performing the held
    /// one: the discard performs it too, on the discarding thread, before it returns.
    func testAMessageDeferredWhileTheDiscardFlushesIsFlushedByTheDiscard() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = Rule(target: obj, selector: "tick:", duration: d, mode: .last)
        let entered = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0), returned = DispatchSemaphore(value: 0)
        rule.alwaysInvoke = { _, ctx in
            if (try? ctx.argument(at: 0, as: Int.self)) == 2 { entered.signal(); proceed.wait() }
            return false
        }
        try fx.engine.apply(rule)
        XCTAssertEqual(try fx.tick(obj, 1, at: 0), 0)
        let result = Locked(-1)
        Thread { result.withLock { $0 = (try? obj.send("tick:", 2, as: Int.self)) ?? -2 }; returned.signal() }.start()
        entered.wait()   // the sender is inside the hook
        fx.log.setOnCall { h in
            // The discard is performing message 1: let the sender defer message 2 now.
            if h.arg == 1 { proceed.signal(); returned.wait() }
        }
        XCTAssertTrue(fx.engine.discard(rule, pending: .flush))
        XCTAssertEqual(result.current, 0, "the sender was told its message was deferred")
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(2, 0)], "both performed before discard returned")
        XCTAssertEqual(fx.log.threads.map { pthread_equal($0, pthread_self()) != 0 }, [true, true], "on the discarding thread")
        XCTAssertNil(rule.pendingInvocation)
        XCTAssertEqual(try fx.tick(obj, 3, at: 10), 30, "the method is restored")
    }

    /// Same, once the discard has returned: the sender performs its message itself (the
    /// caller still gets the suppressed value), or drops it after a `.cancel` discard.
    func testAMessageDeferredAfterTheDiscardReturnedFollowsItsPolicy() throws {
        for policy in [PendingPolicy.flush, .cancel] {
            let fx = try makeFixture("AfterDiscard\(policy)")
            let obj = try fx.instance()
            let rule = Rule(target: obj, selector: "tick:", duration: d, mode: .last)
            rule.suppressedReturn = .value(.int64(-7))
            let entered = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0), returned = DispatchSemaphore(value: 0)
            rule.alwaysInvoke = { _, ctx in
                if (try? ctx.argument(at: 0, as: Int.self)) == 2 { entered.signal(); proceed.wait() }
                return false
            }
            try fx.engine.apply(rule)
            let state = try XCTUnwrap(rule.applied)
            let result = Locked(-1)
            let sender = Thread {
                result.withLock { $0 = (try? obj.send("tick:", 2, as: Int.self)) ?? -2 }
                returned.signal()
            }
            sender.start()
            entered.wait()
            XCTAssertTrue(fx.engine.discard(rule, pending: policy))
            XCTAssertEqual(fx.hits, [])
            proceed.signal()
            returned.wait()
            XCTAssertEqual(result.current, -7, "\(policy): the caller got the suppressed value")
            XCTAssertEqual(fx.hits, policy == .flush ? [hit(2, 0)] : [], "\(policy)")
            XCTAssertNil(state.limiter.pending, "\(policy): nothing left in the discarded rule")
            fx.advance(to: 1000)
            XCTAssertEqual(fx.hits, policy == .flush ? [hit(2, 0)] : [], "\(policy): performed once, not again later")
        }
    }

    func testDiscardingTwiceIsHarmless() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, mode: .debounce, in: fx.engine)
        try fx.tick(obj, 1, at: 0)
        XCTAssertTrue(rule.discard(pending: .flush))
        XCTAssertFalse(rule.discard(pending: .flush))
        XCTAssertFalse(fx.engine.discard(rule, pending: .flush))
        XCTAssertFalse(Engine.shared.discard(rule))
        XCTAssertEqual(fx.hits, [hit(1, 0)], "flushed once, not twice")
        XCTAssertTrue(fx.engine.rules.isEmpty)
        XCTAssertEqual(try fx.tick(obj, 2, at: 10), 20)
    }

    func testDiscardOnAnotherEngineIsRefused() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        let other = Engine(executor: fx.executor)
        XCTAssertFalse(other.discard(rule))
        XCTAssertTrue(rule.isApplied)
        XCTAssertEqual(try fx.tick(obj, 1, at: 0), 10)
        XCTAssertEqual(try fx.tick(obj, 2, at: 1), 0)
    }

    func testADiscardedRuleCanBeAppliedAgain() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        XCTAssertEqual(try fx.tick(obj, 1, at: 0), 10)
        rule.discard()
        XCTAssertEqual(try fx.tick(obj, 2, at: 1), 20)
        try rule.apply(in: fx.engine)
        XCTAssertEqual(try fx.tick(obj, 3, at: 2), 30, "a fresh limiter: the first message passes")
        XCTAssertEqual(try fx.tick(obj, 4, at: 3), 0)
        XCTAssertEqual(fx.engine.rules.count, 1)
    }

    func testApplyingAnAppliedRuleThrows() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, in: fx.engine)
        XCTAssertThrowsError(try fx.engine.apply(rule)) { error in
            guard case .alreadyApplied(let sel, _)? = error as? ThrottleError else { return XCTFail("\(error)") }
            XCTAssertEqual(sel, "tick:")
        }
        let other = Engine(executor: fx.executor)
        XCTAssertThrowsError(try other.apply(rule))
        XCTAssertTrue(other.rules.isEmpty)
    }

    func testDiscardAll() throws {
        let fx = try makeFixture()
        let a = try fx.instance()
        let b = try fx.instance()
        try a.limit("tick:", oncePer: d, mode: .last, in: fx.engine)
        try b.limit("tick:", oncePer: d, mode: .last, in: fx.engine)
        try fx.tick(a, 1, at: 0)
        try fx.tick(b, 2, at: 0)
        fx.engine.discardAll(pending: .flush)
        XCTAssertEqual(Set(fx.hits.map(\.arg)), [1, 2])
        XCTAssertTrue(fx.engine.rules.isEmpty)
    }

    // MARK: - re-entrance

    /// A performed message may discard its own rule (the only owner being the engine), e.g. a
    /// handler that stops throttling once it has run.
    func testAMessageMayDiscardItsOwnRuleWhilePerformedAtOnce() throws {
        let fx = try makeFixture()
        let cls = try RuntimeClass(name: uniqueClassName("SelfDiscard"))
        let engine = fx.engine
        let calls = Locked(0)
        // The class outlives the test, and so would a strongly captured engine.
        try cls.addMethod("once:") { [weak engine] (_: ObjectRef, n: Int) -> Int in
            calls.withLock { $0 += 1 }
            engine?.discardAll()
            return n
        }
        let obj = try cls.createInstance()
        do {
            let rule = try obj.limit("once:", oncePer: d, mode: .firstly, in: engine)
            rule.suppressedReturn = .lastResult
        }
        XCTAssertEqual(try obj.send("once:", 3, as: Int.self), 3)
        XCTAssertTrue(engine.rules.isEmpty)
        XCTAssertEqual(try obj.send("once:", 4, as: Int.self), 4)
        XCTAssertEqual(calls.current, 2)
    }

    func testADelayedMessageMayDiscardItsOwnRule() throws {
        let fx = try makeFixture()
        let cls = try RuntimeClass(name: uniqueClassName("SelfDiscardLater"))
        let engine = fx.engine
        let calls = Locked<[Int]>([])
        // The class outlives the test, and so would a strongly captured engine.
        try cls.addMethod("once:") { [weak engine] (_: ObjectRef, n: Int) -> Int in
            calls.withLock { $0.append(n) }
            engine?.discardAll()
            return n
        }
        let obj = try cls.createInstance()
        do {
            let rule = try obj.limit("once:", oncePer: d, mode: .debounce, in: engine)
            rule.suppressedReturn = .lastResult
            rule.onDelayedError = { _ in }
        }
        XCTAssertEqual(try obj.send("once:", 3, as: Int.self), 0)
        fx.advance(to: 1000)
        XCTAssertEqual(calls.current, [3])
        XCTAssertTrue(engine.rules.isEmpty)
        XCTAssertEqual(try obj.send("once:", 4, as: Int.self), 4)
    }
}
