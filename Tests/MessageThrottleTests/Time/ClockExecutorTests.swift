import TestSupport
import MessageThrottle
import XCTest

final class ClockExecutorTests: XCTestCase {
    func testInstantArithmeticSaturates() {
        let t = instant(ms: 5)
        XCTAssertEqual((t + .milliseconds(3)).nanoseconds, 8_000_000)
        XCTAssertEqual((t - .milliseconds(3)).nanoseconds, 2_000_000)
        XCTAssertEqual(instant(ms: 8) - t, .milliseconds(3))
        XCTAssertEqual(t - instant(ms: 8), .milliseconds(-3))
        XCTAssertEqual(t + .seconds(Int64.max), .distantFuture)
        XCTAssertEqual((instant(ms: -5) + .seconds(Int64.min)).nanoseconds, Int64.min)
        XCTAssertEqual((instant(ms: -5) - .seconds(Int64.max)).nanoseconds, Int64.min)
        XCTAssertLessThan(t, t + .nanoseconds(1))
    }

    func testMonotonicClockNeverGoesBack() {
        let clock = MonotonicClock()
        var last = clock.now
        for _ in 0..<1000 {
            let next = clock.now
            XCTAssertGreaterThanOrEqual(next, last)
            last = next
        }
    }

    func testManualClockRunsWorkInDeadlineOrderFIFOOnTies() {
        let clock = ManualClock()
        let executor = ManualExecutor(clock: clock)
        let log = Tracker()
        for (id, ms) in [(1, 30), (2, 10), (3, 20), (4, 10), (5, 20)] {
            _ = executor.schedule(at: instant(ms: ms)) {
                log.fire(Fire(id: id, ms: milliseconds(clock.now), via: .limiter))
            }
        }
        clock.advance(to: instant(ms: 15))
        XCTAssertEqual(log.fires, [held(2, 10), held(4, 10)])
        XCTAssertEqual(clock.now, instant(ms: 15))
        clock.advance(by: .milliseconds(100))
        XCTAssertEqual(log.fires.map(\.id), [2, 4, 3, 5, 1])
        XCTAssertEqual(log.fires.map(\.ms), [10, 10, 20, 20, 30])
        XCTAssertEqual(clock.now, instant(ms: 115))
        XCTAssertEqual(clock.scheduledCount, 0)
    }

    func testManualClockRunsWorkScheduledWhileAdvancing() {
        let clock = ManualClock()
        let executor = ManualExecutor(clock: clock)
        let log = Tracker()
        _ = executor.schedule(after: .milliseconds(10)) {
            log.fire(Fire(id: 1, ms: milliseconds(clock.now), via: .limiter))
            _ = executor.schedule(after: .milliseconds(5)) {
                log.fire(Fire(id: 2, ms: milliseconds(clock.now), via: .limiter))
            }
        }
        clock.advance(to: instant(ms: 100))
        XCTAssertEqual(log.fires, [held(1, 10), held(2, 15)])
    }

    func testManualClockCancelAndExecute() {
        let clock = ManualClock()
        let executor = ManualExecutor(clock: clock)
        let log = Tracker()
        let token = executor.schedule(at: instant(ms: 10)) { log.fire(held(1, 0)) }
        executor.execute { log.fire(held(2, milliseconds(clock.now))) }
        XCTAssertEqual(clock.scheduledCount, 2)
        token.cancel()
        token.cancel()
        XCTAssertEqual(clock.scheduledCount, 1)
        XCTAssertTrue(log.fires.isEmpty, "execute runs only when the clock is advanced")
        clock.advance(by: .zero)
        XCTAssertEqual(log.fires, [held(2, 0)])
        clock.advance(to: instant(ms: 50))
        XCTAssertEqual(log.fires, [held(2, 0)])
    }

    func testManualClockDoesNotGoBackwards() {
        let clock = ManualClock(now: instant(ms: 50))
        clock.advance(to: instant(ms: 10))
        XCTAssertEqual(clock.now, instant(ms: 50))
        clock.advance(by: .milliseconds(-5))
        XCTAssertEqual(clock.now, instant(ms: 50))
    }

    func testDispatchQueueExecutorRunsScheduledWorkOnItsQueue() {
        let queue = DispatchQueue(label: "test.executor")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let executor = DispatchQueueExecutor(queue: queue)
        let start = executor.clock.now
        let ran = expectation(description: "scheduled")
        let cancelledRan = Tracker()
        let cancelled = executor.schedule(after: .milliseconds(20)) { cancelledRan.fire(held(0, 0)) }
        cancelled.cancel()
        _ = executor.schedule(after: .milliseconds(30)) {
            XCTAssertEqual(DispatchQueue.getSpecific(key: key), 7)
            XCTAssertGreaterThanOrEqual(executor.clock.now - start, .milliseconds(30))
            ran.fulfill()
        }
        let immediate = expectation(description: "execute")
        executor.execute {
            XCTAssertEqual(DispatchQueue.getSpecific(key: key), 7)
            immediate.fulfill()
        }
        wait(for: [immediate, ran], timeout: 5)
        queue.sync {}
        XCTAssertTrue(cancelledRan.fires.isEmpty)
    }
}
