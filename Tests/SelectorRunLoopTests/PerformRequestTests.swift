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
        XCTAssertEqual(target.cancelPreviousPerformRequests(selector: "take:", argument: unrelated), 0,
                       "without isEqual:, arguments match by identity")
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

    /// A class whose `isEqual:` compares the integer associated under `value`, recording what
    /// it was asked about.
    private func keyClass(asked: Locked<[ObjectRef]>) throws -> (RuntimeClass, AssociationKey) {
        let cls = try RuntimeClass(name: uniqueName("Key"))
        let value = AssociationKey("value")
        try cls.addMethod("isEqual:") { (me: ObjectRef, other: ObjectRef) -> Bool in
            asked.mutate { $0.append(other) }
            guard let mine = me.associatedValue(for: value) as? Int else { return false }
            return mine == other.associatedValue(for: value) as? Int
        }
        return (cls, value)
    }

    func testCancelMatchesTheArgumentByIsEqualWhenItsClassImplementsIt() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let asked = Locked<[ObjectRef]>([])
        let (cls, value) = try keyClass(asked: asked)
        func key(_ n: Int) throws -> Object {
            let k = try cls.createInstance()
            k.setAssociatedValue(n, for: value)
            return k
        }
        let one = try key(1), two = try key(2), plain = try recorder.make()
        let first = try target.perform("take:", with: one, afterDelay: 3600)
        let second = try target.perform("take:", with: two, afterDelay: 3600)
        let third = try target.perform("take:", with: plain, afterDelay: 3600)
        let bare = try target.perform("take:", afterDelay: 3600)
        let equal = try key(1)
        XCTAssertEqual(target.cancelPreviousPerformRequests(selector: "take:", argument: equal), 1,
                       "an equal argument, not the same object, as Cocoa's isEqual: match")
        XCTAssertFalse(first.isPending)
        XCTAssertTrue(second.isPending)
        XCTAssertTrue(third.isPending)
        XCTAssertTrue(bare.isPending, "nil is never equal to an argument")
        XCTAssertEqual(Set(asked.value), [one.ref, two.ref, plain.ref], "asked about each request's argument")
        asked.mutate { $0 = [] }
        XCTAssertEqual(target.cancelPreviousPerformRequests(selector: "take:", argument: two), 1)
        XCTAssertEqual(asked.value, [plain.ref], "the same object matches without asking; the others are asked")
        XCTAssertEqual(target.cancelPreviousPerformRequests(), 2)
        spin(passes: 3)
        XCTAssertEqual(recorder.count, 0)
    }

    func testAnObjCBoolIsEqualIsSentToo() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let cls = try RuntimeClass(name: uniqueName("CharKey"))
        // x86-64 Objective-C's BOOL is a signed char: `c@:@`.
        try cls.addMethod("isEqual:") { (_: ObjectRef, other: ObjectRef) -> Int8 in other.isNil ? 0 : 1 }
        let request = try target.perform("take:", with: try cls.createInstance(), afterDelay: 3600)
        XCTAssertEqual(target.cancelPreviousPerformRequests(selector: "take:", argument: try cls.createInstance()), 1)
        XCTAssertFalse(request.isPending)
    }

    func testAnIsEqualThatFailsIsReportedAndMatchesOnlyByIdentity() throws {
        let failures = FailureLog()
        defer { failures.restore() }
        struct Refused: Error {}
        let recorder = try Recorder()
        let target = try recorder.make()
        let wrongType = try RuntimeClass(name: uniqueName("WrongTypeKey"))
        try wrongType.addMethod("isEqual:") { (_: ObjectRef, _: ObjectRef) -> Double in 1 }
        let throwing = try RuntimeClass(name: uniqueName("ThrowingKey"))
        try throwing.addMethod("isEqual:") { (_: ObjectRef, _: ObjectRef) throws -> Bool in throw Refused() }
        for cls in [wrongType, throwing] {
            let argument = try cls.createInstance()
            let request = try target.perform("take:", with: argument, afterDelay: 3600)
            XCTAssertEqual(target.cancelPreviousPerformRequests(selector: "take:", argument: try cls.createInstance()), 0)
            XCTAssertTrue(request.isPending)
            XCTAssertEqual(target.cancelPreviousPerformRequests(selector: "take:", argument: argument), 1, "identity needs no isEqual:")
        }
        let reported = failures.failures.value
        XCTAssertEqual(reported.map(\.selector), ["isEqual:", "isEqual:"])
        XCTAssertEqual(reported.map(\.className), [wrongType.name, throwing.name])
        XCTAssertEqual(reported.map(\.source), ["cancel", "cancel"])
        if case .signatureMismatch = reported.first?.error {} else { XCTFail("\(reported)") }
    }
}
