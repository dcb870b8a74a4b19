import TestSupport
import MessageThrottle
import XCTest

final class DebounceTests: XCTestCase {
    func testIsTheDefaultMode() {
        XCTAssertEqual(ThrottleMode.default, .debounce)
        let limiter = Limiter<Int>(duration: .seconds(1), executor: ManualExecutor(clock: ManualClock())) { _ in }
        XCTAssertEqual(limiter.mode, .debounce)
    }

    func testSingleCallIsPerformedAfterTheQuietPeriod() {
        let h = Harness(.debounce, .milliseconds(100))
        XCTAssertEqual(h.send(1, at: 0), .deferred)
        XCTAssertEqual(h.limiter.pendingDeadline, instant(ms: 100))
        h.advance(to: 99)
        XCTAssertEqual(h.fires, [])
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [held(1, 100)])
    }

    func testBurstPerformsOnlyTheLastAfterQuiet() {
        let h = Harness(.debounce, .milliseconds(100))
        for ms in stride(from: 0, through: 90, by: 10) { XCTAssertEqual(h.send(ms, at: ms), .deferred) }
        XCTAssertEqual(h.limiter.pendingDeadline, instant(ms: 190))
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [held(90, 190)])
        // lodash-style: one timer, fired early at 100, re-armed once for 190.
        XCTAssertEqual(h.schedules, 2)
    }

    func testLongBurstDoesNotScheduleATimerPerMessage() {
        let h = Harness(.debounce, .milliseconds(100))
        for i in 0..<1000 { h.send(i, at: i) } // one message per ms
        h.advance(to: 5000)
        XCTAssertEqual(h.fires, [held(999, 1099)])
        XCTAssertLessThanOrEqual(h.schedules, 12, "about one timer per `duration`, not per message")
        XCTAssertEqual(h.tracker.released.count, 1000)
    }

    func testBoundaryIsInclusive() {
        // Exactly `duration` of quiet: the first fires at 100, before the second starts a new burst.
        assertMarbles("a---------b", .debounce, duration: 100,
                      "----------^a---------^b")

        let h2 = Harness(.debounce, .milliseconds(100))
        h2.send(0, at: 0)
        h2.send(99, at: 99)
        h2.advance(to: 1000)
        XCTAssertEqual(h2.fires, [held(99, 199)])
    }

    func testZeroDuration() {
        let h = Harness(.debounce, .zero)
        XCTAssertEqual(h.send(1, at: 0), .now)
        XCTAssertEqual(h.send(2, at: 0), .now)
        XCTAssertEqual(h.fires, [now(1, 0), now(2, 0)])
    }
}

final class DebounceMaxWaitTests: XCTestCase {
    func testSingleCallWaitsOnlyTheQuietPeriod() {
        let h = Harness(.debounceMaxWait(.milliseconds(100)), .milliseconds(50))
        h.send(1, at: 0)
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [held(1, 50)])
    }

    func testContinuousCallsStillFireEveryMaxWait() {
        // Calls every 10ms for 200ms, wait 50ms, maxWait 100ms.
        let h = Harness(.debounceMaxWait(.milliseconds(100)), .milliseconds(50))
        for ms in stride(from: 0, to: 200, by: 10) { h.send(ms, at: ms) }
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [held(90, 100), held(190, 200)])

        let h2 = Harness(.debounceMaxWait(.milliseconds(100)), .milliseconds(50))
        for ms in stride(from: 0, through: 200, by: 10) { h2.send(ms, at: ms) }
        h2.advance(to: 1000)
        XCTAssertEqual(h2.fires, [held(90, 100), held(190, 200), held(200, 250)], "the last call is never lost")
    }

    func testMaxWaitBelowWaitCountsAsWait() {
        let h = Harness(.debounceMaxWait(.milliseconds(10)), .milliseconds(50))
        for ms in stride(from: 0, to: 200, by: 10) { h.send(ms, at: ms) }
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [held(40, 50), held(90, 100), held(140, 150), held(190, 200)])
    }

    func testBurstShorterThanMaxWaitBehavesLikeDebounce() {
        let h = Harness(.debounceMaxWait(.milliseconds(500)), .milliseconds(50))
        for ms in [0, 20, 40] { h.send(ms, at: ms) }
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [held(40, 90)])
    }

    func testZeroDuration() {
        let h = Harness(.debounceMaxWait(.milliseconds(100)), .zero)
        XCTAssertEqual(h.send(1, at: 0), .now)
        XCTAssertEqual(h.fires, [now(1, 0)])
    }
}
