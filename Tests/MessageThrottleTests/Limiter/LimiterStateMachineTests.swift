import TestSupport
@testable import MessageThrottle
import XCTest

/// The Limiter's state machine alone, without executors: every mode against the timelines of
/// docs/modes.md, then flush, cancel, live edits and the timer bookkeeping.
final class LimiterStateMachineTests: XCTestCase {
    // MARK: - firstly, cooldown

    func testFirstlyPerformsOncePerWindowMeasuredFromThePerformedMessage() {
        var run = MachineRun(.firstly, 100)
        run.send(at: [0, 30, 60, 90, 100, 150, 200, 260])
        XCTAssertEqual(run.marks, ["0!@0", "x30@30", "x60@60", "x90@90", "100!@100", "x150@150", "200!@200", "x260@260"])
        XCTAssertEqual(run.arms, 0, "firstly never arms a timer")
        XCTAssertEqual(run.made, [], "a message performed now or dropped needs no payload")
        XCTAssertTrue(run.isIdle)
    }

    func testCooldownRejectsWhileCoolingAndMakesOnlyTheRejectedPayloads() {
        var run = MachineRun(.cooldown, 100)
        run.send(at: [0, 10, 50, 99, 100, 150, 230])
        XCTAssertEqual(run.marks, ["0!@0", "R10@10", "R50@50", "R99@99", "100!@100", "R150@150", "230!@230"])
        XCTAssertEqual(run.made, [10, 50, 99, 150])
        XCTAssertEqual(run.arms, 0)
    }

    // MARK: - last

    func testLastPerformsTheLastMessageOfEachWindowAtItsEnd() {
        var run = MachineRun(.last, 100)
        run.send(at: [0, 30, 60, 90])
        XCTAssertEqual(run.marks, ["-0@30", "-30@60", "-60@90"], "each message replaces the held one")
        XCTAssertEqual(run.timer?.ms, 100)
        run.send(100, at: 100)  // the deadline at 100 is processed first: a new window
        run.send(150, at: 150)
        run.advance(to: 1000)
        XCTAssertEqual(run.marks, ["-0@30", "-30@60", "-60@90", "^90@100", "-100@150", "^150@200"])
        XCTAssertEqual(run.arms, 2, "one timer per window")
        XCTAssertTrue(run.isIdle)
        XCTAssertNil(run.timer)
    }

    func testLastMessageAtTheEdgeWithoutTheTimerSettlesTheOldWindowFirst() {
        // A late timer: the message finds the edge overdue and performs the held payload first.
        var machine = LimiterStateMachine<Int>(mode: .last, duration: .milliseconds(100))
        _ = machine.messageArrived(at: instant(ms: 0)) { 1 }
        let (verdict, action) = machine.messageArrived(at: instant(ms: 130)) { 2 }
        XCTAssertEqual(verdict, .deferred)
        XCTAssertEqual(action.perform, 1)
        XCTAssertNil(action.release)
        XCTAssertEqual(machine.pendingDeadline, instant(ms: 230), "the new window opens at 130")
    }

    // MARK: - debounce

    func testDebounceBurstPerformsTheLastMessageAfterQuietWithTwoTimers() {
        var run = MachineRun(.debounce, 100)
        run.send(at: Array(stride(from: 0, through: 90, by: 10)))
        XCTAssertEqual(run.timer?.ms, 100, "the first timer is kept while the deadline moves")
        run.advance(to: 100)
        XCTAssertEqual(run.timer?.ms, 190, "fired early: re-checked and re-armed")
        run.advance(to: 1000)
        XCTAssertEqual(run.marks.last, "^90@190")
        XCTAssertEqual(run.marks.filter { $0.hasPrefix("^") }, ["^90@190"])
        XCTAssertEqual(run.arms, 2)
    }

    func testDebounceMaxWaitPerformsAtLeastEveryMaxWait() {
        var run = MachineRun(.debounceMaxWait(.milliseconds(100)), 50)
        run.send(at: Array(stride(from: 0, through: 200, by: 10)))
        run.advance(to: 1000)
        XCTAssertEqual(run.marks.filter { $0.hasPrefix("^") }, ["^90@100", "^190@200", "^200@250"])
    }

    func testDebounceMaxWaitBelowTheDurationCountsAsTheDuration() {
        var a = MachineRun(.debounceMaxWait(.milliseconds(10)), 50)
        var b = MachineRun(.debounceMaxWait(.milliseconds(50)), 50)
        let times = Array(stride(from: 0, through: 300, by: 7))
        a.send(at: times); a.advance(to: 1000)
        b.send(at: times); b.advance(to: 1000)
        XCTAssertEqual(a.marks, b.marks)
        XCTAssertGreaterThan(a.marks.filter { $0.hasPrefix("^") }.count, 3)
    }

    func testMaxWaitElapsedInsideAWindowWithoutLeadingEdgePerformsAtOnce() {
        // lodash's "tight loop" branch: the window [55, 105) opened after the fire at 50; at 100
        // maxWait has passed since that fire, so 100 is performed now and 55 is dropped.
        var run = MachineRun(.debounceMaxWait(.milliseconds(50)), 50)
        run.send(at: [0, 10, 20, 30, 40, 55])
        XCTAssertEqual(run.send(100, at: 100), .performNow)
        XCTAssertEqual(run.marks, ["-0@10", "-10@20", "-20@30", "-30@40", "^40@50", "-55@100", "100!@100"])
        guard case .open(let start) = run.machine.state else { return XCTFail("\(run.machine.state)") }
        XCTAssertEqual(start, instant(ms: 100), "the window reopens at the performed message")
        XCTAssertNil(run.timer, "nothing held, no timer")
    }

    // MARK: - throttle

    func testThrottleBothEdgesBurstThenALoneMessage() {
        var run = MachineRun(.throttle(leading: true, trailing: true), 100)
        run.send(at: Array(stride(from: 0, through: 90, by: 10)))
        run.send(300, at: 300)
        run.advance(to: 1000)
        XCTAssertEqual(run.marks.filter { !$0.hasPrefix("-") }, ["0!@0", "^90@100", "300!@300"])
        XCTAssertEqual(run.arms, 1, "the lone message holds nothing: no timer")
    }

    func testThrottleAfterATrailingFireOpensAWindowLikeLodash() {
        var run = MachineRun(.throttle(leading: true, trailing: true), 100)
        run.send(at: [0, 50, 120])
        run.advance(to: 1000)
        XCTAssertEqual(run.marks, ["0!@0", "^50@100", "^120@220"])

        var superseded = MachineRun(.throttle(leading: true, trailing: true), 100)
        superseded.send(at: [0, 50, 120, 200])
        superseded.advance(to: 1000)
        XCTAssertEqual(superseded.marks, ["0!@0", "^50@100", "-120@200", "200!@200"])
    }

    func testThrottleLeadingOnlyNeverHoldsNorArms() {
        var run = MachineRun(.throttle(leading: true, trailing: false), 100)
        run.send(at: [0, 10, 90, 100, 150, 250])
        XCTAssertEqual(run.marks, ["0!@0", "x10@10", "x90@90", "100!@100", "x150@150", "250!@250"])
        XCTAssertEqual(run.made, [])
        XCTAssertEqual(run.arms, 0)
    }

    func testThrottleWithNeitherEdgeDropsEverything() {
        var run = MachineRun(.throttle(leading: false, trailing: false), 100)
        run.send(at: [0, 10, 200, 400])
        run.advance(to: 1000)
        XCTAssertEqual(run.marks, ["x0@0", "x10@10", "x200@200", "x400@400"])
        XCTAssertEqual(run.made, [])
    }

    func testThrottleTrailingOnlyMatchesDebounceMaxWaitOfTheDuration() {
        var seed: UInt64 = 0x5eed
        for _ in 0..<50 {
            var times: [Int] = [], t = 0
            for _ in 0..<30 {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                t += Int(seed >> 58)  // 0...63 ms apart
                times.append(t)
            }
            var a = MachineRun(.throttle(leading: false, trailing: true), 40)
            var b = MachineRun(.debounceMaxWait(.milliseconds(40)), 40)
            a.send(at: times); a.advance(to: t + 1000)
            b.send(at: times); b.advance(to: t + 1000)
            XCTAssertEqual(a.marks, b.marks, "\(times)")
        }
    }
}
