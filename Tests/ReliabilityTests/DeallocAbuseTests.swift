import TestSupport
import XCTest
import CDynamicRuntime
@testable import DynamicRuntime
@testable import MessageThrottle

/// What code running during an object's deallocation may do
/// to that object. Retains and releases are inert; a capture that would outlive the object
/// (an invocation record, a deferred throttled message) holds nil instead of it.
final class DeallocAbuseTests: XCTestCase {
    private func makeClass(_ name: String) throws -> RuntimeClass {
        let c = try RuntimeClass(name: name, ivars: [("child", .object)])
        try c.addMethod("ping:") { (_: ObjectRef, id: Int) -> Int in id + 1 }
        return c
    }

    func testRetainAndReleaseInADeallocObserverDoNotDeallocateTwice() throws {
        let c = try makeClass("Abuse.Resurrect")
        let baseline = Runtime.liveObjectCount
        let key = AssociationKey("child")
        nonisolated(unsafe) var runs = 0
        do {
            let o = try c.createInstance()
            o.setAssociatedValue(try c.createInstance(), for: key)
            o.onDeallocate { me in
                runs += 1
                // libobjc2's ResurrectInDealloc: the count must not go back to one and down again.
                sf_retain(me.raw)
                sf_release(me.raw)
                sf_retain(me.raw)
                sf_retain(me.raw)
                sf_release(me.raw)
            }
        }
        XCTAssertEqual(runs, 1)
        XCTAssertEqual(Runtime.liveObjectCount, baseline, "the object or its association leaked")
    }

    func testAnObjectHandleMadeInAnObserverDoesNotResurrect() throws {
        let c = try makeClass("Abuse.Handle")
        let baseline = Runtime.liveObjectCount
        nonisolated(unsafe) var sent = 0
        do {
            let o = try c.createInstance()
            o.onDeallocate { me in
                // Object(retaining:) and its deinit inside the observer: both inert.
                let handle = me.retained()
                sent = (try? handle?.send("ping:", 41) as Int?) ?? -1
            }
        }
        XCTAssertEqual(sent, 42)
        XCTAssertEqual(Runtime.liveObjectCount, baseline)
    }

    func testAnInvocationMadeDuringDeallocationDropsTheTarget() throws {
        let c = try makeClass("Abuse.Invocation")
        let performed = LockedInts()
        try c.addMethod("note:") { (_: ObjectRef, id: Int) -> Int in performed.append(id); return id }
        let kept = LockedInvocations()
        let token = try c.hook("note:", .instead) { ctx in
            kept.append(ctx.makeInvocation())
            try ctx.proceed()
        }
        defer { token.remove() }
        do {
            let o = try c.createInstance()
            o.onDeallocate { me in _ = try? me.send("note:", 7) as Int }
        }
        XCTAssertEqual(performed.values, [7], "the send from the observer runs at once")
        let inv = try XCTUnwrap(kept.values.first)
        XCTAssertTrue(inv.target.isNil, "a record of a dying receiver must not keep a dangling target")
        try inv.invoke()
        XCTAssertEqual(performed.values, [7], "replaying the record reached the freed object")
    }

    func testAnObjectArgumentDyingWhenCapturedIsDropped() throws {
        let c = try makeClass("Abuse.Argument")
        try c.addMethod("take:") { (_: ObjectRef, _: ObjectRef) in }
        let kept = LockedInvocations()
        let token = try c.hook("take:", .before) { ctx in kept.append(ctx.makeInvocation()) }
        defer { token.remove() }
        let receiver = try c.createInstance()
        do {
            let o = try c.createInstance()
            o.onDeallocate { me in
                do { try receiver.send("take:", me) } catch { XCTFail("\(error)") }
            }
        }
        let inv = try XCTUnwrap(kept.values.first)
        XCTAssertEqual(inv.target, receiver.ref)
        XCTAssertTrue(try inv.argument(at: 0, as: ObjectRef.self).isNil, "a dying argument was kept")
    }

    func testDeferringModesDropAMessageSentToADyingObject() throws {
        for mode in [ThrottleMode.last, .debounce, .throttle(leading: true, trailing: true)] {
            let c = try makeClass("Abuse.Throttle.\(mode)")
            let performed = LockedInts()
            try c.addMethod("note:") { (_: ObjectRef, id: Int) -> Int in performed.append(id); return id }
            let clock = ManualClock()
            let engine = Engine(executor: ManualExecutor(clock: clock))
            let rule = Rule(target: c, selector: "note:", duration: .seconds(10), mode: mode)
            try engine.apply(rule)
            let baseline = Runtime.liveObjectCount
            do {
                let o = try c.createInstance()
                // The first call of a trailing throttle runs at once; the second is deferred.
                _ = try o.send("note:", 1) as Int
                o.onDeallocate { me in _ = try? me.send("note:", 2) as Int }
            }
            clock.advance(by: .seconds(60))
            _ = rule.flush()
            XCTAssertFalse(performed.values.contains(2), "\(mode): a message deferred on a dying object was performed")
            XCTAssertEqual(Runtime.liveObjectCount, baseline, "\(mode)")
            XCTAssertTrue(engine.discard(rule))
        }
    }
}

final class LockedInts: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [Int] = []
    func append(_ v: Int) { lock.withLock { list.append(v) } }
    var values: [Int] { lock.withLock { list } }
}

final class LockedInvocations: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [Invocation] = []
    func append(_ v: Invocation) { lock.withLock { list.append(v) } }
    var values: [Invocation] { lock.withLock { list } }
}
