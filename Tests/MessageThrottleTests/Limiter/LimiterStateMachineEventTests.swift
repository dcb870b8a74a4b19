import TestSupport
@testable import MessageThrottle
import XCTest

/// The state machine's other events: zero durations, flush, cancel, live edits, timers.
final class LimiterStateMachineEventTests: XCTestCase {
    static let modes: [ThrottleMode] = [
        .firstly, .last, .debounce, .debounceMaxWait(.milliseconds(150)),
        .throttle(leading: true, trailing: true), .throttle(leading: false, trailing: true),
        .throttle(leading: true, trailing: false), .throttle(leading: false, trailing: false), .cooldown,
        .leadingDebounce(), .leadingDebounce(trailing: false), .leadingDebounce(maxWait: .milliseconds(150)),
        .throttleSincePerformed(latest: true), .throttleSincePerformed(latest: false),
        .delayedCooldown(delay: .zero), .delayedCooldown(delay: .milliseconds(30)),
    ]

    func testZeroOrNegativeDurationPerformsEveryMessageInEveryMode() {
        for mode in Self.modes {
            for ms in [0, -5] {
                var run = MachineRun(mode, ms)
                run.send(at: [0, 0, 1, 2])
                XCTAssertEqual(run.marks, ["0!@0", "0!@0", "1!@1", "2!@2"], "\(mode) d=\(ms)")
                XCTAssertEqual(run.arms, 0)
            }
        }
    }

    func testFlushPerformsTheHeldPayloadAndClosesTheWindow() {
        var run = MachineRun(.throttle(leading: true, trailing: true), 100)
        run.send(at: [0, 10])
        XCTAssertTrue(run.flush(at: 50))
        XCTAssertEqual(run.marks, ["0!@0", "^10@50"])
        XCTAssertNil(run.timer, "nothing held: the timer is cancelled")
        XCTAssertTrue(run.isIdle)
        // Judged against the flush at 50: no new leading edge at 60.
        XCTAssertEqual(run.send(60, at: 60), .deferred)
        run.advance(to: 1000)
        XCTAssertEqual(run.marks, ["0!@0", "^10@50", "^60@160"], "no earlier than the new window's first check")
    }

    func testFlushWithNothingHeldPerformsNothing() {
        for mode in Self.modes {
            var run = MachineRun(mode, 100)
            XCTAssertFalse(run.flush(at: 0), "\(mode)")
            run.send(0, at: 0)
            _ = run.flush(at: 10)
            XCTAssertFalse(run.flush(at: 20), "\(mode): flushed twice")
            XCTAssertEqual(run.marks.count, 1, "\(mode): \(run.marks)")
        }
    }

    func testCancelReleasesTheHeldPayloadAndForgetsTheHistory() {
        var run = MachineRun(.debounce, 100)
        run.send(1, at: 0)
        run.cancel(at: 20)
        XCTAssertEqual(run.marks, ["-1@20"])
        XCTAssertNil(run.timer)
        XCTAssertEqual(run.machine.history, .init())
        run.advance(to: 1000)
        XCTAssertEqual(run.marks, ["-1@20"], "never performed")

        var cooling = MachineRun(.cooldown, 100)
        cooling.send(1, at: 0)
        cooling.cancel(at: 10)
        XCTAssertEqual(cooling.send(2, at: 20), .performNow, "a cancel ends the cooldown")
    }

    func testADurationEditTakesEffectAtTheNextMessageAndMovesTheDeadline() {
        var run = MachineRun(.debounce, 100)
        run.send(1, at: 0)
        run.machine.setDuration(.milliseconds(30))
        XCTAssertEqual(run.machine.pendingDeadline, instant(ms: 100), "nothing changes before a message")
        run.send(2, at: 50)  // re-evaluated: the edge of 1 was 30, overdue
        XCTAssertEqual(run.marks, ["^1@50"])
        XCTAssertEqual(run.machine.pendingDeadline, instant(ms: 80))

        var longer = MachineRun(.last, 100)
        longer.send(1, at: 0)
        longer.machine.setDuration(.milliseconds(300))
        longer.advance(to: 50)
        longer.send(2, at: 50)
        XCTAssertEqual(longer.machine.pendingDeadline, instant(ms: 300), "the open window now lasts 300")
    }

    func testAModeEditPerformsTheOldPayloadThenStartsIdle() {
        // docs/modes.md: debounce d=100; mode := firstly at 20.
        var run = MachineRun(.debounce, 100)
        run.send(1, at: 0)
        run.machine.setMode(.firstly)
        XCTAssertEqual(run.machine.active.mode, .debounce)
        XCTAssertEqual(run.send(2, at: 50), .performNow)
        XCTAssertEqual(run.send(3, at: 60), .dropped)
        XCTAssertEqual(run.marks, ["^1@50", "2!@50", "x3@60"])
        XCTAssertNil(run.timer)
    }

    func testAModeEditToCooldownPerformsTheOldPayloadAndRejectsNothingYet() {
        var run = MachineRun(.last, 100)
        run.send(1, at: 0)
        run.machine.setMode(.cooldown)
        run.send(2, at: 10)
        run.send(3, at: 20)
        XCTAssertEqual(run.marks, ["^1@10", "2!@10", "R3@20"])
    }

    func testAStaleOrEarlyTimerOnlyReChecks() {
        var machine = LimiterStateMachine<Int>(mode: .debounce, duration: .milliseconds(100))
        let first = machine.messageArrived(at: instant(ms: 0)) { 1 }.action
        guard case let .arm(deadline, id) = first.timer else { return XCTFail("\(first.timer)") }
        XCTAssertEqual(deadline, instant(ms: 100))
        _ = machine.messageArrived(at: instant(ms: 60)) { 2 }

        let stale = machine.timerFired(id &+ 7, at: instant(ms: 100))
        XCTAssertNil(stale.perform)
        XCTAssertEqual(stale.timer, .keep, "a stale timer leaves the armed one alone")

        let early = machine.timerFired(id, at: instant(ms: 100))
        XCTAssertNil(early.perform)
        XCTAssertEqual(early.timer, .arm(at: instant(ms: 160), id: id + 1))

        let due = machine.timerFired(id + 1, at: instant(ms: 160))
        XCTAssertEqual(due.perform, 2)
        XCTAssertEqual(due.timer, .disarm, "the limiter forgets the token of the timer that ran")
        XCTAssertNil(machine.armed)
    }

    func testMessagesThatHoldNothingLeaveTheTimerAlone() {
        // The hot path: a dropped or passed-through message returns an empty action.
        for mode in [ThrottleMode.firstly, .throttle(leading: true, trailing: false)] {
            var machine = LimiterStateMachine<Int>(mode: mode, duration: .milliseconds(100))
            for ms in [0, 10, 20, 100, 110] {
                let (_, action) = machine.messageArrived(at: instant(ms: ms)) { XCTFail("made"); return 0 }
                XCTAssertNil(action.perform); XCTAssertNil(action.reject); XCTAssertNil(action.release)
                XCTAssertEqual(action.timer, .keep, "\(mode) at \(ms)")
            }
        }
    }
}
