import DynamicRuntime
import Foundation
import SelectorRunLoop
import XCTest

final class TimerLifetimeTests: XCTestCase {
    private let timerKey = AssociationKey("TimerLifetimeTests.timer")

    /// The mediator pattern: an object owns its repeating timer; the timer holds it weakly.
    func testAnOwnerOfAWeakTargetTimerIsFreedAndTheTimerStops() throws {
        let recorder = try Recorder()
        var owner: Object? = try recorder.make()
        let freed = DeallocFlag(owner!)
        weak var weakTimer: SelectorTimer?
        do {
            let timer = try SelectorTimer(timeInterval: 0.001, weakTarget: owner!, selector: "tick:", repeats: true)
            try timer.schedule()
            owner!.setAssociatedValue(timer, for: timerKey)
            weakTimer = timer
        }
        XCTAssertTrue(spin { recorder.count >= 3 })
        XCTAssertTrue(weakTimer?.isValid ?? false)
        owner = nil
        XCTAssertTrue(freed.deallocated, "the timer does not keep its owner alive")
        let fires = recorder.count
        XCTAssertTrue(spin { weakTimer == nil }, "the first fire after the owner is gone invalidates the timer, and the loop releases it")
        spin(passes: 10)
        XCTAssertEqual(recorder.count, fires, "nothing is sent after the owner is gone")
    }

    func testAStrongTargetTimerKeepsItsOwnerAliveUntilInvalidated() throws {
        let recorder = try Recorder()
        var owner: Object? = try recorder.make()
        let freed = DeallocFlag(owner!)
        let timer = try SelectorTimer(timeInterval: 0.001, target: owner!, selector: "ping", repeats: true)
        try timer.schedule()
        owner!.setAssociatedValue(timer, for: timerKey)
        owner = nil
        XCTAssertTrue(spin { recorder.count >= 2 })
        XCTAssertFalse(freed.deallocated, "the retain cycle Cocoa has: loop → timer → target")
        timer.invalidate()
        XCTAssertTrue(freed.deallocated, "invalidation breaks it")
    }

    func testASelectorNoLongerAnsweredGoesToTheErrorHandlerAndInvalidatesARepeatingTimer() throws {
        let failures = FailureLog()
        defer { failures.restore() }
        let recorder = try Recorder()
        let target = try recorder.make()
        let failing = try SelectorTimer(timeInterval: 0.001, target: target, selector: "take:", repeats: true)
        let healthy = try SelectorTimer(timeInterval: 0.001, target: target, selector: "ping", repeats: true)
        try recorder.cls.removeMethod("take:")
        try failing.schedule()
        try healthy.schedule()
        XCTAssertTrue(spin { !failing.isValid && recorder.count >= 3 }, "the loop keeps running other timers")
        healthy.invalidate()
        XCTAssertEqual(failures.failures.value.count, 1, "reported once, then the timer is invalidated")
        let failure = try XCTUnwrap(failures.failures.value.first)
        XCTAssertEqual(failure.selector, "take:")
        XCTAssertEqual(failure.className, recorder.cls.name)
        XCTAssertEqual(failure.source, "timer")
        XCTAssertEqual(failure.error, .doesNotRecognizeSelector(.init(className: recorder.cls.name, selector: "take:", isClassMethod: false)))
        XCTAssertEqual(Set(recorder.selectors), ["ping"])
    }

    func testBadInputIsAThrownErrorAndNothingIsScheduled() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        for bad in [-1, .nan, .infinity, -.infinity] as [Double] {
            XCTAssertThrowsError(try SelectorTimer(timeInterval: bad, target: target, selector: "ping", repeats: true)) {
                guard case .invalidInterval(what: "time interval", _) = $0 as? RunLoopError else { return XCTFail("\($0)") }
            }
            XCTAssertThrowsError(try target.perform("ping", afterDelay: bad)) {
                guard case .invalidInterval(what: "delay", _) = $0 as? RunLoopError else { return XCTFail("\($0)") }
            }
        }
        XCTAssertThrowsError(try SelectorTimer(timeInterval: 1, target: ObjectRef.nil, selector: "ping", repeats: false)) {
            XCTAssertEqual($0 as? RunLoopError, .nilTarget(selector: "ping"))
        }
        XCTAssertThrowsError(try ObjectRef.nil.perform("ping", afterDelay: 0)) {
            XCTAssertEqual($0 as? RunLoopError, .nilTarget(selector: "ping"))
        }
        XCTAssertThrowsError(try SelectorTimer(timeInterval: 1, target: target, selector: "add:to:", repeats: false)) {
            XCTAssertEqual($0 as? RunLoopError, .unsupportedSignature(className: recorder.cls.name, selector: "add:to:", signature: "q@:qq",
                                                                      expected: "with no argument or one object argument"))
            XCTAssertTrue("\($0)".contains(recorder.cls.name) && "\($0)".contains("add:to:") && "\($0)".contains("q@:qq"))
        }
        XCTAssertThrowsError(try SelectorTimer(timeInterval: 1, target: target, selector: "count:", repeats: false)) {
            guard case .unsupportedSignature(_, "count:", "v@:q", _) = $0 as? RunLoopError else { return XCTFail("\($0)") }
        }
        let timer = try SelectorTimer(timeInterval: 1, target: target, selector: "ping", repeats: false)
        XCTAssertThrowsError(try timer.schedule(forModes: [])) { XCTAssertEqual($0 as? RunLoopError, .noModes) }
        try timer.schedule()
        XCTAssertThrowsError(try timer.schedule()) { XCTAssertEqual($0 as? RunLoopError, .alreadyScheduled(selector: "ping")) }
        timer.invalidate()
        let dead = try SelectorTimer(timeInterval: 1, target: target, selector: "ping", repeats: false)
        dead.invalidate()
        XCTAssertThrowsError(try dead.schedule()) { XCTAssertEqual($0 as? RunLoopError, .invalidated(selector: "ping")) }
        spin(passes: 5)
        XCTAssertEqual(recorder.count, 0)
    }

    func testARunLoopOfAnotherThreadNotSeenIsRefused() throws {
        let foreign = Locked<RunLoop?>(nil)
        let thread = Thread { foreign.mutate { $0 = RunLoop.current } }
        let done = DispatchSemaphore(value: 0)
        let waiter = Thread { while foreign.value == nil { usleep(100) }; done.signal() }
        thread.start()
        waiter.start()
        done.wait()
        let timer = try SelectorTimer(timeInterval: 1, target: try Recorder().make(), selector: "ping", repeats: false)
        XCTAssertThrowsError(try timer.schedule(on: foreign.value!)) { XCTAssertEqual($0 as? RunLoopError, .unknownRunLoop) }
        foreign.mutate { $0 = nil }
    }
}
