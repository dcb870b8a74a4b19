import DynamicRuntime
import Foundation
import SelectorRunLoop
import XCTest

final class SelectorTimerTests: XCTestCase {
    func testRepeatingTimerSendsTheTimerObjectUntilTheMethodInvalidatesIt() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let fires = Locked(0)
        recorder.onTick.mutate {
            $0 = { timerObject in
                if fires.mutate({ $0 += 1; return $0 }) == 3 { try? timerObject.send("invalidate", as: Void.self) }
            }
        }
        let timer = try SelectorTimer(timeInterval: 0.001, target: target, selector: "tick:", userInfo: "info", repeats: true)
        try timer.schedule(on: .current, forModes: [.default])
        XCTAssertTrue(spin { !timer.isValid })
        spin(passes: 5)
        XCTAssertEqual(recorder.count, 3)
        XCTAssertEqual(Set(recorder.log.value.map(\.argument)), [timer.object])
        XCTAssertTrue(SelectorTimer.from(timer.object) === timer)
        XCTAssertTrue(recorder.log.value.allSatisfy { $0.onMainThread && $0.mode == RunLoop.Mode.default.rawValue })
        XCTAssertNil(timer.userInfo, "released at invalidation")
    }

    func testOneShotTimerSendsAMethodWithoutArgumentOnceAndReleasesTargetAndUserInfo() throws {
        let recorder = try Recorder()
        var target: Object? = try recorder.make()
        let released = DeallocFlag(target!)
        var canary: Canary? = Canary()
        weak let weakCanary = canary
        let timer = try SelectorTimer(timeInterval: 0, target: target!, selector: "ping", userInfo: canary, repeats: false)
        canary = nil
        target = nil
        XCTAssertFalse(released.deallocated, "the timer retains its target until invalidated")
        XCTAssertNotNil(weakCanary, "and its userInfo")
        try timer.schedule()
        XCTAssertTrue(spin { recorder.count == 1 })
        spin(passes: 5)
        XCTAssertEqual(recorder.selectors, ["ping"])
        XCTAssertFalse(timer.isValid)
        XCTAssertTrue(released.deallocated)
        XCTAssertNil(weakCanary)
    }

    func testScheduledTimerReleasesItselfAfterInvalidation() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        weak var weakTimer: SelectorTimer?
        do {
            let timer = try SelectorTimer.scheduled(timeInterval: 0.001, target: target, selector: "ping", repeats: true)
            weakTimer = timer
        }
        XCTAssertNotNil(weakTimer, "the run loop retains a scheduled timer")
        XCTAssertTrue(spin { recorder.count >= 2 })
        weakTimer?.invalidate()
        XCTAssertNil(weakTimer, "and releases it at invalidation")
        let count = recorder.count
        spin(passes: 10)
        XCTAssertEqual(recorder.count, count)
    }

    func testTimerFiresOnlyInItsModes() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let custom = try SelectorTimer(timeInterval: 0, target: target, selector: "tick:", repeats: false)
        try custom.schedule(on: .current, forModes: [tracking])
        spin(.default, passes: 20)
        XCTAssertEqual(recorder.count, 0, "not in the default mode")
        XCTAssertTrue(spin(tracking) { recorder.count == 1 })
        XCTAssertEqual(recorder.log.value.map(\.mode), [tracking.rawValue])

        let common = try SelectorTimer(timeInterval: 0, target: target, selector: "ping", repeats: false)
        try common.schedule(on: .current, forModes: [.common])
        XCTAssertTrue(spin(.default) { recorder.count == 2 })
        XCTAssertEqual(recorder.log.value.last?.mode, RunLoop.Mode.default.rawValue)
    }

    func testCommonModesIncludeAnAddedTrackingMode() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        try RunLoop.current.addCommonMode(tracking)
        let timer = try SelectorTimer(timeInterval: 0, target: target, selector: "ping", repeats: false)
        try timer.schedule(on: .current, forModes: [.common])
        XCTAssertTrue(spin(tracking) { recorder.count == 1 })
        XCTAssertEqual(recorder.log.value.map(\.mode), [tracking.rawValue])
    }

    func testFireSendsAtOnceAndKeepsARepeatingScheduleFireDateMovesIt() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let later = Date(timeIntervalSinceNow: 3600)
        let timer = try SelectorTimer(fireAt: later, interval: 60, target: target, selector: "ping", repeats: true)
        try timer.schedule()
        timer.fire()
        timer.fire()
        XCTAssertEqual(recorder.count, 2, "fire() sends on the calling thread, at once")
        XCTAssertTrue(timer.isValid, "a repeating timer stays valid after fire()")
        XCTAssertEqual(timer.fireDate.timeIntervalSinceReferenceDate, later.timeIntervalSinceReferenceDate, accuracy: 0.001)
        spin(passes: 5)
        XCTAssertEqual(recorder.count, 2)
        let moved = Date()
        timer.fireDate = moved
        XCTAssertTrue(spin { recorder.count == 3 })
        XCTAssertGreaterThan(timer.fireDate, Date(timeIntervalSinceNow: 30), "the next fire is an interval later")
        timer.invalidate()
        XCTAssertEqual(timer.fireDate.timeIntervalSinceReferenceDate, moved.timeIntervalSinceReferenceDate, accuracy: 1e-6,
                       "an invalidated timer reads the date it last fired")
        timer.fire()
        XCTAssertEqual(recorder.count, 3, "fire() does nothing once invalidated")

        let oneShot = try SelectorTimer(timeInterval: 60, target: target, selector: "ping", repeats: false)
        let before = Date()
        oneShot.fire()
        let after = Date()
        XCTAssertFalse(oneShot.isValid, "a one-shot timer is invalidated by fire()")
        XCTAssertEqual(recorder.count, 4)
        // CF's clock reads microseconds; Date()'s finer: compare with a millisecond's slack.
        XCTAssertTrue((before.addingTimeInterval(-0.001)...after.addingTimeInterval(0.001)).contains(oneShot.fireDate),
                      "it last fired at the fire() call")
    }

    func testAnInvalidatedRepeatingTimerReadsTheDateItLastFired() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        // Overdue: it fires on the next pass, and CF moves its next fire past now, an hour off.
        let due = Date(timeIntervalSinceNow: -10)
        let timer = try SelectorTimer(fireAt: due, interval: 3600, target: target, selector: "ping", repeats: true)
        try timer.schedule()
        XCTAssertTrue(spin { recorder.count == 1 })
        XCTAssertGreaterThan(timer.fireDate, Date(timeIntervalSinceNow: 60), "while valid: the next fire")
        timer.invalidate()
        XCTAssertEqual(timer.fireDate.timeIntervalSinceReferenceDate, due.timeIntervalSinceReferenceDate, accuracy: 1e-6,
                       "invalidated: the date it last fired, not the slot after it")
        spin(passes: 3)
        XCTAssertEqual(timer.fireDate.timeIntervalSinceReferenceDate, due.timeIntervalSinceReferenceDate, accuracy: 1e-6)
        XCTAssertEqual(recorder.count, 1)
    }

    func testATimerInvalidatedByItsMethodReadsTheFireThatRanIt() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        recorder.onTick.mutate { $0 = { timerObject in try? timerObject.send("invalidate", as: Void.self) } }
        let due = Date(timeIntervalSinceNow: -5)
        let timer = try SelectorTimer(fireAt: due, interval: 3600, target: target, selector: "tick:", repeats: true)
        try timer.schedule()
        XCTAssertTrue(spin { !timer.isValid })
        XCTAssertEqual(recorder.count, 1)
        XCTAssertEqual(timer.fireDate.timeIntervalSinceReferenceDate, due.timeIntervalSinceReferenceDate, accuracy: 1e-6)
    }

    func testToleranceIsRecordedAndBadValuesReadAsZero() throws {
        let timer = try SelectorTimer(timeInterval: 1, target: try Recorder().make(), selector: "ping", repeats: true)
        timer.tolerance = 0.25
        XCTAssertEqual(timer.tolerance, 0.25)
        timer.tolerance = .nan
        XCTAssertEqual(timer.tolerance, 0)
        timer.tolerance = -1
        XCTAssertEqual(timer.tolerance, 0)
        XCTAssertEqual(timer.timeInterval, 1)
        XCTAssertEqual(try SelectorTimer(timeInterval: 0, target: try Recorder().make(), selector: "ping", repeats: true).timeInterval,
                       0.0001, "a repeating interval of 0 is 0.1 ms, as in Cocoa")
    }

    func testTimerObjectAnswersLikeAnNSTimer() throws {
        let recorder = try Recorder()
        let userInfo = try recorder.make()
        let timer = try SelectorTimer(timeInterval: 2, target: try recorder.make(), selector: "ping", userInfo: userInfo, repeats: true)
        XCTAssertEqual(try timer.object.send("isValid", as: Bool.self), true)
        XCTAssertEqual(try timer.object.send("timeInterval", as: Double.self), 2)
        XCTAssertEqual(try timer.object.send("userInfo", as: Object?.self), userInfo)
        try timer.object.send("fire", as: Void.self)
        XCTAssertEqual(recorder.selectors, ["ping"])
        try timer.object.send("invalidate", as: Void.self)
        XCTAssertFalse(timer.isValid)
        XCTAssertEqual(try timer.object.send("userInfo", as: Object?.self), nil)
    }
}
