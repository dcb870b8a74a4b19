import TestSupport
import Foundation
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// What callers get back from calls the rule drops or defers: `.zero`, `.value(v)` and
/// `.lastResult`, for scalars and for objects (which are +1 for the caller, like any object
/// return).
final class EngineReturnValueTests: XCTestCase {
    private let d = Duration.milliseconds(100)

    func testZeroIsTheDefault() throws {
        let fx = try makeFixture()
        let scalars = try RuntimeClass(name: uniqueClassName("Scalars"))
        try scalars.addMethod("yes:") { (_: ObjectRef, _: Int) -> Bool in true }
        try scalars.addMethod("half:") { (_: ObjectRef, n: Int) -> Double in Double(n) / 2 }
        try scalars.addMethod("small:") { (_: ObjectRef, n: Int) -> Int32 in Int32(n) }
        let s = try scalars.createInstance()
        let obj = try fx.instance()
        for sel: Selector in ["yes:", "half:", "small:"] {
            let rule = try s.limit(sel, oncePer: d, mode: .firstly, in: fx.engine)
            if case .zero = rule.suppressedReturn {} else { XCTFail("\(rule.suppressedReturn)") }
        }
        let rule = try obj.limit("make:", oncePer: d, mode: .firstly, in: fx.engine)
        XCTAssertEqual(try s.send("yes:", 1, as: Bool.self), true)
        XCTAssertEqual(try s.send("yes:", 1, as: Bool.self), false)
        XCTAssertEqual(try s.send("half:", 3, as: Double.self), 1.5)
        XCTAssertEqual(try s.send("half:", 3, as: Double.self), 0)
        XCTAssertEqual(try s.send("small:", -7, as: Int32.self), -7)
        XCTAssertEqual(try s.send("small:", -7, as: Int32.self), 0)
        let first: Object? = try obj.send("make:", 1)
        let second: Object? = try obj.send("make:", 2)
        XCTAssertNotNil(first)
        XCTAssertNil(second, "a suppressed object return is nil")
        XCTAssertNil(rule.lastResult, "only recorded for .lastResult")
    }

    func testAFixedValue() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, mode: .throttle(leading: true, trailing: true), in: fx.engine)
        rule.suppressedReturn = .value(.int64(-1))
        XCTAssertEqual(try fx.tick(obj, 1, at: 0), 10, "performed at once: the real result")
        XCTAssertEqual(try fx.tick(obj, 2, at: 10), -1, "deferred")
        XCTAssertEqual(try fx.tick(obj, 3, at: 20), -1, "deferred")
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(3, 100)])
    }

    func testAFixedValueOfTheWrongTypeIsReportedToTheCaller() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        rule.suppressedReturn = .value(.double(1.5))
        XCTAssertEqual(try fx.tick(obj, 1, at: 0), 10)
        XCTAssertThrowsError(try fx.tick(obj, 2, at: 1)) { error in
            guard case .signatureMismatch(let context)? = error as? RuntimeError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(context.className, fx.cls.name)
            XCTAssertEqual(context.selector, "tick:")
        }
        XCTAssertEqual(fx.hits, [hit(1, 0)], "the call was still dropped")
    }

    func testTheLastResultOfCallsPerformedAtOnceAndLater() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, mode: .debounce, in: fx.engine)
        rule.suppressedReturn = .lastResult
        XCTAssertNil(rule.lastResult)
        XCTAssertEqual(try fx.tick(obj, 1, at: 0), 0, "zero before the first performance")
        XCTAssertEqual(try fx.tick(obj, 2, at: 10), 0)
        fx.advance(to: 110)
        XCTAssertEqual(rule.lastResult?.intValue, 20, "the delayed message's result")
        XCTAssertEqual(try fx.tick(obj, 3, at: 200), 20)
        XCTAssertEqual(try fx.tick(obj, 4, at: 210), 20)
        fx.advance(to: 310)
        XCTAssertEqual(try fx.tick(obj, 5, at: 400), 40)
        XCTAssertEqual(rule.lastResult?.intValue, 40)
        // Performed at once (mode changed): the real result, which becomes the last result.
        rule.mode = .firstly
        XCTAssertEqual(try fx.tick(obj, 6, at: 450), 60, "the old message (5) runs first, then 6 at once")
        XCTAssertEqual(fx.hits.suffix(2), [hit(5, 450), hit(6, 450)])
        XCTAssertEqual(try fx.tick(obj, 7, at: 451), 60)
        XCTAssertEqual(rule.lastResult?.intValue, 60)
    }

    func testAlwaysInvokedCallsUpdateTheLastResult() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        rule.suppressedReturn = .lastResult
        rule.alwaysInvoke = { _, call in ((try? call.argument(at: 0, as: Int.self)) ?? 0) >= 100 }
        XCTAssertEqual(try fx.tick(obj, 1, at: 0), 10)
        XCTAssertEqual(try fx.tick(obj, 100, at: 1), 1000)
        XCTAssertEqual(try fx.tick(obj, 2, at: 2), 1000)
    }

    // MARK: - objects

    func testAFixedObjectIsReturnedPlusOne() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let baseline = Runtime.liveObjectCount
        do {
            let fixed = try fx.payload(99)
            let rule = try obj.limit("make:", oncePer: d, mode: .firstly, in: fx.engine)
            rule.suppressedReturn = .value(.object(fixed))
            XCTAssertEqual(fixed.retainCount, 1)
            let first: Object? = try obj.send("make:", 1)
            XCTAssertEqual(try first?.value(ofIvar: "tag", as: Int.self), 1)
            XCTAssertEqual(first?.retainCount, 1, "the caller owns the performed call's object alone")
            var second: Object? = try obj.send("make:", 2)
            XCTAssertEqual(second, fixed)
            XCTAssertEqual(fixed.retainCount, 2, "the caller got its own reference")
            second = nil
            XCTAssertEqual(fixed.retainCount, 1)
            for i in 3...10 { let _: Object? = try obj.send("make:", i) }
            XCTAssertEqual(fixed.retainCount, 1, "callers that drop the result release it")
            rule.discard()
            withExtendedLifetime(first) {}
        }
        XCTAssertEqual(Runtime.liveObjectCount, baseline, "no object leaked")
    }

    func testTheLastObjectResultIsReturnedPlusOne() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let baseline = Runtime.liveObjectCount
        do {
            let rule = try obj.limit("make:", oncePer: d, mode: .debounce, in: fx.engine)
            rule.suppressedReturn = .lastResult
            let none: Object? = try obj.send("make:", 1)
            XCTAssertNil(none, "nil before the first performance")
            fx.advance(to: 100)
            let last = try XCTUnwrap(rule.lastResult?.objectValue)
            XCTAssertEqual(try last.value(ofIvar: "tag", as: Int.self), 1)
            XCTAssertEqual(last.retainCount, 1, "held by the rule only: the replayed record let go of it")
            var got: Object? = try obj.send("make:", 2)
            XCTAssertEqual(got, last)
            XCTAssertEqual(last.retainCount, 2)
            got = nil
            XCTAssertEqual(last.retainCount, 1)
            // The next performance replaces (and releases) the last result.
            let weakLast = try WeakReference(last)
            fx.advance(to: 300)
            XCTAssertEqual(try rule.lastResult?.objectValue?.value(ofIvar: "tag", as: Int.self), 2)
            withExtendedLifetime(last) {}
            _ = consume last
            XCTAssertNil(weakLast.object, "the previous last result was released")
            rule.discard()
        }
        XCTAssertEqual(Runtime.liveObjectCount, baseline, "no object leaked")
    }

    func testObjectsReturnedByCallsPerformedAtOnceAreOwnedByTheCaller() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let baseline = Runtime.liveObjectCount
        do {
            let rule = try obj.limit("make:", oncePer: d, mode: .throttle(leading: true, trailing: true), in: fx.engine)
            rule.suppressedReturn = .lastResult
            var first: Object? = try obj.send("make:", 1)
            XCTAssertEqual(first?.retainCount, 2, "the caller's and the rule's last result")
            let weakFirst = try WeakReference(first!)
            var second: Object? = try obj.send("make:", 2)
            XCTAssertEqual(second, first, "deferred: the last result")
            XCTAssertEqual(first?.retainCount, 3)
            first = nil
            second = nil
            fx.advance(to: 100)   // 2 is performed; its object becomes the last result
            XCTAssertNil(weakFirst.object)
            XCTAssertEqual(try rule.lastResult?.objectValue?.value(ofIvar: "tag", as: Int.self), 2)
            rule.discard()
        }
        XCTAssertEqual(Runtime.liveObjectCount, baseline, "no object leaked")
    }
}
