import DynamicRuntime
import Foundation
import SelectorRunLoop
import XCTest

final class PerformRequestTests: XCTestCase {
    func testRequestsWithTheSameDeadlineRunInTheOrderMade() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let arguments = try (0..<20).map { _ in try recorder.make() }
        let date = Date(timeIntervalSinceNow: 0.002)
        for argument in arguments { try target.perform("take:", with: argument, at: date) }
        XCTAssertTrue(spin { recorder.count == 20 })
        XCTAssertEqual(recorder.log.value.map(\.argument), arguments.map(\.ref))
        XCTAssertTrue(recorder.log.value.allSatisfy(\.onMainThread))
    }

    func testOverdueRequestsRunInDeadlineOrderThenCreationOrder() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let a = try recorder.make(), b = try recorder.make(), c = try recorder.make(), d = try recorder.make()
        let base = Date()
        try target.perform("take:", with: a, at: base.addingTimeInterval(-0.001))
        try target.perform("take:", with: b, at: base.addingTimeInterval(-0.003))
        try target.perform("take:", with: c, at: base.addingTimeInterval(-0.001))
        try target.perform("take:", with: d, at: base.addingTimeInterval(-0.002))
        XCTAssertTrue(spin { recorder.count == 4 })
        XCTAssertEqual(recorder.log.value.map(\.argument), [b, d, a, c].map(\.ref))
    }

    func testCancelByTargetSelectorAndArgumentReleasesWhatItRetained() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        var a: Object? = try recorder.make()
        let aFreed = DeallocFlag(a!)
        let b = try recorder.make()
        let date = Date(timeIntervalSinceNow: 0.001)
        let request = try target.perform("take:", with: a, at: date)
        try target.perform("take:", with: b, at: date)
        try target.perform("take:", at: date)
        try target.perform("ping", at: date)
        a = nil
        XCTAssertFalse(aFreed.deallocated, "a request retains its argument")
        XCTAssertEqual(target.cancelPreviousPerformRequests(selector: "take:", argument: nil), 1,
                       "nil matches only the request without an argument")
        XCTAssertFalse(aFreed.deallocated)
        XCTAssertTrue(request.isPending)
        let unrelated = try recorder.make()
        XCTAssertEqual(target.cancelPreviousPerformRequests(selector: "take:", argument: unrelated), 0, "arguments match by identity")
        XCTAssertTrue(request.cancel())
        XCTAssertFalse(request.cancel(), "cancelling twice cancels nothing")
        XCTAssertTrue(aFreed.deallocated, "the cancelled request released its argument")
        XCTAssertTrue(spin { recorder.count == 2 })
        spin(passes: 5)
        XCTAssertEqual(recorder.selectors.sorted(), ["ping", "take:"])
        XCTAssertEqual(recorder.log.value.first { $0.selector == "take:" }?.argument, b.ref)
    }

    func testCancelAllForATargetReleasesTheTarget() throws {
        let recorder = try Recorder()
        var target: Object? = try recorder.make()
        let freed = DeallocFlag(target!)
        let other = try recorder.make()
        for _ in 0..<3 { try target!.perform("ping", afterDelay: 0.001) }
        try target!.perform("take:", with: other, afterDelay: 0.001)
        try other.perform("ping", afterDelay: 0.001)
        let t = target!
        target = nil
        XCTAssertFalse(freed.deallocated)
        XCTAssertEqual(t.cancelPreviousPerformRequests(), 4)
        XCTAssertTrue(spin { recorder.count == 1 })
        spin(passes: 5)
        XCTAssertEqual(recorder.selectors, ["ping"])
        withExtendedLifetime(t) {}
    }

    func testRequestsRunOnlyInTheirModes() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        try target.perform("ping", afterDelay: 0, inModes: [tracking])
        spin(.default, passes: 20)
        XCTAssertEqual(recorder.count, 0)
        XCTAssertTrue(spin(tracking) { recorder.count == 1 })
        XCTAssertEqual(recorder.log.value.map(\.mode), [tracking.rawValue])
    }

    func testASelectorNoLongerAnsweredIsReportedAndTheLoopGoesOn() throws {
        let failures = FailureLog()
        defer { failures.restore() }
        let recorder = try Recorder()
        let target = try recorder.make()
        try target.perform("take:", afterDelay: 0)
        try recorder.cls.removeMethod("take:")
        try target.perform("ping", afterDelay: 0.001)
        XCTAssertTrue(spin { recorder.count == 1 })
        XCTAssertEqual(failures.failures.value.map(\.selector), ["take:"])
        XCTAssertEqual(failures.failures.value.map(\.source), ["perform request"])
    }

    func testWaitingOnTheCurrentThreadRunsAtOnce() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        try target.perform("ping", on: RunLoop.current, waitUntilDone: true)
        XCTAssertEqual(recorder.count, 1, "no run of the loop needed, no deadlock")
        try target.perform("ping", on: RunLoop.current, waitUntilDone: false)
        XCTAssertEqual(recorder.count, 1, "without waiting, it runs on the loop")
        XCTAssertTrue(spin { recorder.count == 2 })
    }

    func testInBackgroundAndThreadWithTargetAndSelector() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let argument = try recorder.make()
        try target.performInBackground("take:", with: argument)
        XCTAssertTrue(spin { recorder.count == 1 })
        let thread = try Thread(target: target, selector: "take:", object: argument)
        XCTAssertEqual(recorder.count, 1, "not started yet")
        thread.start()
        XCTAssertTrue(spin { recorder.count == 2 })
        let log = recorder.log.value
        XCTAssertEqual(log.map(\.argument), [argument.ref, argument.ref])
        XCTAssertFalse(log.contains(where: \.onMainThread))
        XCTAssertThrowsError(try Thread(target: target, selector: "add:to:", object: nil)) {
            guard case .unsupportedSignature = $0 as? RunLoopError else { return XCTFail("\($0)") }
        }
    }

    func testAThreadWithATargetReleasesTargetAndObjectOnceItsBodyHasRun() throws {
        let recorder = try Recorder()
        var target: Object? = try recorder.make()
        var argument: Object? = try recorder.make()
        let targetFreed = DeallocFlag(target!), argumentFreed = DeallocFlag(argument!)
        let thread = try Thread(target: target!, selector: "take:", object: argument)
        target = nil
        argument = nil
        XCTAssertFalse(targetFreed.deallocated, "retained until it has run")
        XCTAssertFalse(argumentFreed.deallocated)
        thread.start()
        let deadline = Date(timeIntervalSinceNow: 10)
        while !thread.isFinished && Date() < deadline { usleep(1000) }
        XCTAssertTrue(thread.isFinished)
        XCTAssertEqual(recorder.selectors, ["take:"])
        XCTAssertTrue(targetFreed.deallocated, "released when the thread has run, while the Thread object lives on")
        XCTAssertTrue(argumentFreed.deallocated)
        withExtendedLifetime(thread) {}
    }
}
