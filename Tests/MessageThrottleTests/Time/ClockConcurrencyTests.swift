import TestSupport
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// `ManualClock` as a Swift `Clock`, the task executor on any clock, and `Engine(clock:)`.
/// Tasks sleep and wake across threads: the name puts the class in CI's TSan run.
final class ClockConcurrencyTests: XCTestCase {
    /// Generic `Clock` code, as a user would write it.
    private func later<C: Clock>(_ clock: C, by d: Duration) -> C.Instant where C.Duration == Duration {
        clock.now.advanced(by: d)
    }

    func testManualClockIsAClockOnItsVirtualTimeline() {
        let clock = ManualClock()
        XCTAssertEqual(later(clock, by: .milliseconds(5)), instant(ms: 5))
        XCTAssertEqual(clock.minimumResolution, .nanoseconds(1))
        XCTAssertEqual(clock.now.duration(to: instant(ms: 7)), .milliseconds(7))
        let elapsed = clock.measure { clock.advance(by: .milliseconds(42)) }
        XCTAssertEqual(elapsed, .milliseconds(42))
    }

    func testASleepingTaskResumesDuringTheAdvanceThatReachesItsDeadline() async throws {
        let clock = ManualClock()
        let woke = Locked<ThrottleInstant?>(nil)
        let task = Task {
            try await clock.sleep(for: .milliseconds(100))
            woke.withLock { $0 = clock.now }
        }
        // Wait (in real time, not for a timing result) until the task is asleep on the clock.
        while clock.scheduledCount == 0 { await Task.yield() }
        clock.advance(by: .milliseconds(99))
        XCTAssertEqual(clock.scheduledCount, 1, "not due yet")
        clock.advance(by: .milliseconds(1))
        XCTAssertEqual(clock.scheduledCount, 0)
        try await task.value
        XCTAssertEqual(woke.withLock { $0 }, instant(ms: 100))
    }

    func testASleepAlreadyDueReturnsAtOnce() async throws {
        let clock = ManualClock(now: instant(ms: 50))
        try await clock.sleep(until: instant(ms: 50))
        try await clock.sleep(until: instant(ms: 10))
        XCTAssertEqual(clock.scheduledCount, 0)
    }

    func testCancellingASleepingTaskThrowsAndRemovesItsWakeUp() async {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(for: .seconds(1)) }
        while clock.scheduledCount == 0 { await Task.yield() }
        task.cancel()
        do {
            try await task.value
            XCTFail("a cancelled sleep returned")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertEqual(clock.scheduledCount, 0, "the wake-up left the timeline")
        clock.advance(by: .seconds(2))
    }

    func testTaskExecutorRunsALimiterOnAManualClockAtItsDeadline() async {
        let clock = ManualClock()
        let performed = expectation(description: "the debounced payload")
        let at = Locked<[Int]>([])
        let limiter = Limiter<Int>(
            mode: .debounce, duration: .milliseconds(100), executor: ClockTaskExecutor(clock: clock),
            perform: { id in at.withLock { $0.append(id * 1000 + milliseconds(clock.now)) }; performed.fulfill() })
        XCTAssertEqual(limiter.receive(1).isDeferred, true)
        clock.advance(to: instant(ms: 40))
        XCTAssertEqual(limiter.receive(2).isDeferred, true)
        // The first timer (due 100) fires early, re-arms for 140; a task that has not slept yet
        // when time passes its deadline wakes at once, so the result does not depend on timing.
        clock.advance(to: instant(ms: 100))
        while limiter.pendingDeadline != nil, clock.scheduledCount == 0 { await Task.yield() }
        clock.advance(to: instant(ms: 140))
        await fulfillment(of: [performed], timeout: 10)
        XCTAssertEqual(at.withLock { $0 }, [2140], "payload 2 at 140 ms")
    }

    func testTaskExecutorOnTheContinuousClock() async {
        // Real time: only that it runs, not when (timing is tested in virtual time above).
        let performed = expectation(description: "performed on the continuous clock")
        let executor = ClockTaskExecutor(clock: ContinuousClock())
        let limiter = Limiter<Int>(mode: .last, duration: .milliseconds(5), executor: executor,
                                   perform: { _ in performed.fulfill() })
        XCTAssertEqual(limiter.receive(1).isDeferred, true)
        XCTAssertGreaterThanOrEqual(executor.clock.now, .zero)
        await fulfillment(of: [performed], timeout: 10)
        XCTAssertFalse(limiter.isPending)
    }

    func testCancelledTaskTimerNeverRuns() async {
        let clock = ManualClock()
        let ran = Locked(false)
        let token = ClockTaskExecutor(clock: clock).schedule(at: instant(ms: 10)) { ran.withLock { $0 = true } }
        token.cancel()
        clock.advance(to: instant(ms: 20))
        for _ in 0..<100 { await Task.yield() }
        XCTAssertFalse(ran.withLock { $0 })
    }

    func testEngineTakesAnyClock() throws {
        XCTAssertTrue(Engine.executor(for: ManualClock()) is ManualExecutor, "virtual time stays deterministic")
        XCTAssertTrue(Engine.executor(for: ContinuousClock()) is ClockTaskExecutor<ContinuousClock>)
        XCTAssertTrue(Engine.executor(for: SuspendingClock()) is ClockTaskExecutor<SuspendingClock>)
        // A rule on an engine made from a ManualClock, in virtual time.
        let clock = ManualClock()
        let engine = Engine(clock: clock)
        let cls = try RuntimeClass(name: uniqueClassName("ClockEngine"))
        let log = Locked<[Int]>([])
        try cls.addMethod("tick:") { (_: ObjectRef, n: Int) in log.withLock { $0.append(n * 1000 + milliseconds(clock.now)) } }
        let obj = try cls.createInstance()
        let rule = try obj.limit("tick:", oncePer: .milliseconds(100), mode: .throttleSincePerformed(latest: true), in: engine)
        defer { rule.discard() }
        for (n, ms) in [(1, 0), (2, 50), (3, 120)] {
            clock.advance(to: instant(ms: ms))
            try obj.send("tick:", n, as: Void.self)
        }
        XCTAssertTrue(rule.isPending)
        clock.advance(to: instant(ms: 1000))
        XCTAssertEqual(log.withLock { $0 }, [1000, 2100, 3200])
        XCTAssertFalse(rule.isPending)
    }
}

private extension Limiter.Decision {
    var isDeferred: Bool {
        if case .deferred = self { return true }
        return false
    }
}
