import TestSupport
import MessageThrottle
import XCTest

/// flush, cancel, pending, and live edits of mode and duration.
final class ControlTests: XCTestCase {
    // MARK: flush

    func testFlushPerformsThePendingPayloadSynchronously() {
        let h = Harness(.debounce, .milliseconds(100))
        h.send(1, at: 0)
        h.send(2, at: 10)
        h.advance(to: 30)
        XCTAssertTrue(h.limiter.flush())
        XCTAssertEqual(h.fires, [held(2, 30)], "performed before flush returns")
        XCTAssertNil(h.limiter.pending)
        XCTAssertEqual(h.clock.scheduledCount, 0, "the timer is cancelled")
        XCTAssertFalse(h.limiter.flush())
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [held(2, 30)], "never performed twice")
    }

    func testFlushClosesTheWindowLikeLodash() {
        let h = Harness(.throttle(leading: true, trailing: true), .milliseconds(100))
        h.send(0, at: 0)
        h.send(10, at: 10)
        h.advance(to: 20)
        h.limiter.flush()
        XCTAssertEqual(h.send(30, at: 30), .deferred, "no new leading edge right after a flush")
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [now(0, 0), held(10, 20), held(30, 130)])
    }

    func testFlushWithNothingPendingIsANoOp() {
        let h = Harness(.firstly, .milliseconds(100))
        XCTAssertFalse(h.limiter.flush())
        h.send(0, at: 0)
        XCTAssertFalse(h.limiter.flush())
        XCTAssertEqual(h.send(10, at: 10), .dropped)
    }

    // MARK: cancel

    func testCancelDropsThePendingPayloadAndTimer() {
        let h = Harness(.last, .milliseconds(100))
        h.send(1, at: 0)
        h.send(2, at: 10)
        XCTAssertEqual(h.limiter.pending?.id, 2)
        h.limiter.cancel()
        XCTAssertNil(h.limiter.pending)
        XCTAssertNil(h.limiter.pendingDeadline)
        XCTAssertEqual(h.clock.scheduledCount, 0)
        XCTAssertEqual(Set(h.tracker.released), [1, 2])
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [])
        h.send(3, at: 1000)
        h.advance(to: 2000)
        XCTAssertEqual(h.fires, [held(3, 1100)], "the limiter works normally afterwards")
    }

    func testCancelResetsToIdle() {
        let h = Harness(.throttle(leading: true, trailing: true), .milliseconds(100))
        h.send(0, at: 0)
        h.limiter.cancel()
        XCTAssertEqual(h.send(10, at: 10), .now, "treated as the first message")
    }

    // MARK: pending

    func testPendingShowsTheLatestHeldPayload() {
        let h = Harness(.debounce, .milliseconds(100))
        XCTAssertNil(h.limiter.pending)
        h.send(1, at: 0)
        XCTAssertEqual(h.limiter.pending?.id, 1)
        h.send(2, at: 5)
        XCTAssertEqual(h.limiter.pending?.id, 2)
        XCTAssertEqual(h.limiter.pendingDeadline, instant(ms: 105))
        h.advance(to: 200)
        XCTAssertNil(h.limiter.pending)
    }

    // MARK: live edits

    func testDurationEditKeepsThePendingDeadlineUntilTheNextMessage() {
        let h = Harness(.debounce, .milliseconds(100))
        h.send(1, at: 0)
        h.advance(to: 10)
        h.limiter.duration = .milliseconds(30)
        XCTAssertEqual(h.limiter.duration, .milliseconds(30))
        XCTAssertEqual(h.limiter.pendingDeadline, instant(ms: 100))
        h.advance(to: 99)
        XCTAssertEqual(h.fires, [])
        h.advance(to: 100)
        XCTAssertEqual(h.fires, [held(1, 100)])
        h.send(2, at: 200)
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [held(1, 100), held(2, 230)], "the new duration applies from the next message")
    }

    func testDurationEditAppliesToTheOpenWindowAtTheNextMessage() {
        let h = Harness(.debounce, .milliseconds(100))
        h.send(1, at: 0)
        h.advance(to: 10)
        h.limiter.duration = .milliseconds(300)
        h.send(2, at: 50) // same burst: replaces 1, deadline 50 + 300
        XCTAssertEqual(h.limiter.pendingDeadline, instant(ms: 350))
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [held(2, 350)])
    }

    func testShrunkWindowThatIsAlreadyOverPerformsFirst() {
        let h = Harness(.last, .milliseconds(100))
        h.send(1, at: 0)
        h.advance(to: 10)
        h.limiter.duration = .milliseconds(50)
        h.send(2, at: 70) // window [0, 50) is over: 1 is performed, 2 opens [70, 120)
        XCTAssertEqual(h.fires, [held(1, 70)])
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [held(1, 70), held(2, 120)])
    }

    func testModeEditPerformsTheOldPendingBeforeTheNewMessage() {
        let h = Harness(.debounce, .milliseconds(100))
        h.send(1, at: 0)
        h.advance(to: 20)
        h.limiter.mode = .firstly
        XCTAssertEqual(h.limiter.mode, .firstly)
        XCTAssertEqual(h.limiter.pendingDeadline, instant(ms: 100), "nothing changes until the next message")
        XCTAssertEqual(h.send(2, at: 50), .now, "the new mode starts idle")
        XCTAssertEqual(h.fires, [held(1, 50), now(2, 50)], "old payload first, order kept")
        XCTAssertEqual(h.send(3, at: 60), .dropped)
        h.advance(to: 1000)
        XCTAssertEqual(h.fires.count, 2)
        XCTAssertEqual(h.clock.scheduledCount, 0)
    }

    func testModeEditWithoutAFurtherMessageKeepsTheOldDeadline() {
        let h = Harness(.last, .milliseconds(100))
        h.send(1, at: 0)
        h.limiter.mode = .cooldown
        h.limiter.duration = .zero
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [held(1, 100)])
        XCTAssertEqual(h.send(2, at: 1000), .now)
        XCTAssertEqual(h.send(3, at: 1000), .now, "zero duration: no limiting")
        XCTAssertTrue(h.tracker.rejected.isEmpty)
    }

    func testEditToZeroDurationPerformsPendingThenEverythingAtOnce() {
        let h = Harness(.throttle(leading: true, trailing: true), .milliseconds(100))
        h.send(0, at: 0)
        h.send(1, at: 10)
        h.limiter.duration = .zero
        XCTAssertEqual(h.send(2, at: 20), .now)
        XCTAssertEqual(h.send(3, at: 20), .now)
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [now(0, 0), held(1, 20), now(2, 20), now(3, 20)])
    }

    func testCooldownDurationEditAppliesAtTheNextMessage() {
        let h = Harness(.cooldown, .milliseconds(100))
        h.send(0, at: 0)
        h.limiter.duration = .milliseconds(30)
        XCTAssertEqual(h.send(40, at: 40), .now, "cooling is re-judged with the new duration")
        h.limiter.duration = .milliseconds(300)
        XCTAssertEqual(h.send(200, at: 200), .dropped)
        XCTAssertEqual(h.tracker.rejected, [200])
    }

    func testSettingTheSameValuesChangesNothing() {
        let h = Harness(.debounce, .milliseconds(100))
        h.send(1, at: 0)
        h.limiter.mode = .debounce
        h.limiter.duration = .milliseconds(100)
        h.send(2, at: 50)
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [held(2, 150)])
    }

    func testEditFromAnotherModeWhileIdle() {
        let h = Harness(.firstly, .milliseconds(100))
        h.send(0, at: 0)
        h.limiter.mode = .last
        h.send(1, at: 10)
        h.send(2, at: 20)
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [now(0, 0), held(2, 110)])
    }

    // MARK: late timers

    /// A timer that has not run yet when the next message arrives (executor
    /// busy) is settled first, so the outcome equals a punctual timer's.
    func testOverduePayloadIsPerformedBeforeTheNextMessage() {
        let clock = ManualClock()
        let tracker = Tracker()
        // An executor whose timers never run: every deadline is "late".
        let limiter = Limiter<Probe>(
            mode: .debounce,
            duration: .milliseconds(100),
            executor: StalledExecutor(clock: clock),
            perform: { tracker.fire(Fire(id: $0.id, ms: milliseconds(clock.now), via: .limiter)) }
        )
        _ = limiter.receive(Probe(1))
        clock.advance(to: instant(ms: 150))
        XCTAssertEqual(limiter.pending?.id, 1)
        _ = limiter.receive(Probe(2))
        XCTAssertEqual(tracker.fires, [held(1, 150)])
        XCTAssertEqual(limiter.pendingDeadline, instant(ms: 250))
    }
}

/// Keeps every scheduled work item and never runs it.
struct StalledExecutor: ThrottleExecutor {
    let manualClock: ManualClock
    init(clock: ManualClock) { manualClock = clock }
    var clock: any ThrottleClock { manualClock }
    func execute(_ work: @escaping @Sendable () -> Void) {}
    func schedule(at deadline: ThrottleInstant, _ work: @escaping @Sendable () -> Void) -> any ThrottleCancellable {
        Nothing()
    }

    struct Nothing: ThrottleCancellable {
        func cancel() {}
    }
}
