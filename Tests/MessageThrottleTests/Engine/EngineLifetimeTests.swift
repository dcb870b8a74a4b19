import TestSupport
import Foundation
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// Object lifetimes through the engine: rules on objects go away with their object, pending
/// messages keep their target and object arguments alive exactly until they run (or are
/// cancelled), and C strings are copied.
final class EngineLifetimeTests: XCTestCase {
    private let d = Duration.milliseconds(100)

    // MARK: - auto-discard

    /// For every mode: a rule on an object is discarded when the object is deallocated, once
    /// nothing (no pending message) keeps it alive. Covers calls performed at once, dropped,
    /// rejected and deferred.
    func testARuleOnAnObjectIsDiscardedWhenTheObjectIsDeallocated() throws {
        for mode in allEngineModes {
            let fx = try makeFixture()
            collectRuntimeGarbage()
            let baseline = Runtime.liveObjectCount
            let closures = Runtime.liveClosureCount
            var obj: Object? = try fx.mortalInstance()
            let weakObj = try WeakReference(obj!)
            let deallocated = Locked(false)
            obj!.onDeallocate { _ in deallocated.withLock { $0 = true } }
            let rule = try obj!.limit("tick:", oncePer: d, mode: mode, in: fx.engine)
            var token: HookToken? = try XCTUnwrap(rule.applied?.hook)
            XCTAssertTrue(token!.isActive)
            for (i, ms) in [0, 10, 20].enumerated() { try fx.tick(obj!, i + 1, at: ms) }
            fx.advance(to: 1000)   // anything pending has run
            XCTAssertEqual(fx.engine.rules.count, 1, "\(mode)")
            XCTAssertTrue(fx.engine.rule(for: obj!, selector: "tick:") === rule, "\(mode)")
            obj = nil
            XCTAssertTrue(deallocated.current, "\(mode): nothing the engine keeps may retain the target")
            XCTAssertNil(weakObj.object, "\(mode)")
            XCTAssertEqual(fx.engine.rules.count, 0, "\(mode): engine.rules shrinks")
            XCTAssertFalse(rule.isApplied, "\(mode)")
            XCTAssertFalse(token!.isActive, "\(mode): the hook is removed")
            token = nil
            XCTAssertFalse(rule.discard(), "\(mode): already discarded")
            XCTAssertEqual(Runtime.liveObjectCount, baseline, "\(mode)")
            collectRuntimeGarbage()
            XCTAssertEqual(Runtime.liveClosureCount, closures, "\(mode): the hidden class's trampoline is freed")
            // The class's own method was never touched and still works for other instances.
            let other = try fx.instance()
            XCTAssertEqual(try other.send("tick:", 5, as: Int.self), 50, "\(mode)")
        }
    }

    func testAnObjectWithAPendingMessageLivesUntilTheMessageHasRun() throws {
        let fx = try makeFixture()
        var obj: Object? = try fx.mortalInstance()
        let weakObj = try WeakReference(obj!)
        let rule = try obj!.limit("tick:", oncePer: d, mode: .last, in: fx.engine)
        try fx.tick(obj!, 1, at: 0)
        obj = nil
        XCTAssertNotNil(weakObj.object, "the pending message retains its target")
        XCTAssertTrue(rule.isApplied)
        fx.advance(to: 100)
        XCTAssertEqual(fx.hits, [hit(1, 100)], "performed on the object the caller dropped")
        XCTAssertNil(weakObj.object, "released right after the replay")
        XCTAssertFalse(rule.isApplied, "and then the rule went with it")
        XCTAssertEqual(fx.engine.rules.count, 0)
        XCTAssertEqual(fx.clock.scheduledCount, 0)
    }

    func testCancellingThePendingMessageOfADroppedObjectDeallocatesIt() throws {
        let fx = try makeFixture()
        var obj: Object? = try fx.mortalInstance()
        let weakObj = try WeakReference(obj!)
        let rule = try obj!.limit("tick:", oncePer: d, mode: .debounce, in: fx.engine)
        try fx.tick(obj!, 1, at: 0)
        obj = nil
        XCTAssertNotNil(weakObj.object)
        rule.cancel()
        XCTAssertNil(weakObj.object)
        XCTAssertFalse(rule.isApplied)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [])
    }

    func testApplyingARuleWhoseTargetIsGoneThrows() throws {
        let fx = try makeFixture()
        var obj: Object? = try fx.mortalInstance()
        let rule = Rule(target: obj!, selector: "tick:", duration: d)
        obj = nil
        XCTAssertThrowsError(try rule.apply(in: fx.engine)) { error in
            XCTAssertEqual(error as? ThrottleError, .targetDeallocated(selector: "tick:"))
        }
        XCTAssertFalse(rule.isApplied)
        XCTAssertTrue(fx.engine.rules.isEmpty)
    }

    func testARuleOnNilIsAnErrorNotACrash() throws {
        let fx = try makeFixture()
        XCTAssertThrowsError(try ObjectRef.nil.limit("tick:", oncePer: d, in: fx.engine)) { error in
            XCTAssertEqual(error as? ThrottleError, .targetDeallocated(selector: "tick:"))
        }
        XCTAssertTrue(fx.engine.rules.isEmpty)
    }

    // MARK: - object arguments

    func testObjectArgumentsLiveUntilTheDelayedReplayAndAreReleasedAfterIt() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        try obj.limit("take:", oncePer: d, mode: .debounce, in: fx.engine)
        let baseline = Runtime.liveObjectCount
        var arg: Object? = try fx.payload(42)
        let weakArg = try WeakReference(arg!)
        let deallocatedAt = Locked<Int?>(nil)
        let log = fx.log
        arg!.onDeallocate { _ in deallocatedAt.withLock { $0 = log.ms } }
        fx.advance(to: 0)
        try fx.take(obj, arg)
        arg = nil
        XCTAssertNotNil(weakArg.object, "the pending message retains its object argument")
        fx.advance(to: 99)
        XCTAssertNil(deallocatedAt.current)
        XCTAssertEqual(fx.log.objectTags, [])
        fx.advance(to: 100)
        XCTAssertEqual(fx.log.objectTags, [42], "the replay sees the live argument")
        XCTAssertEqual(deallocatedAt.current, 100, "released right after the replay")
        XCTAssertEqual(Runtime.liveObjectCount, baseline)
    }

    func testSupersededDroppedAndRejectedObjectArgumentsAreReleasedAtOnce() throws {
        let cases: [(ThrottleMode, String)] = [
            (.last, "superseded"), (.debounce, "superseded"), (.throttle(leading: true, trailing: true), "superseded"),
            (.firstly, "dropped"), (.throttle(leading: true, trailing: false), "dropped"), (.cooldown, "rejected"),
        ]
        for (mode, what) in cases {
            let fx = try makeFixture()
            let obj = try fx.instance()
            try obj.limit("take:", oncePer: d, mode: mode, in: fx.engine)
            let baseline = Runtime.liveObjectCount
            // A first call takes the leading edge or opens the window.
            try fx.take(obj, payloadTagged: 1)
            var second: Object? = try fx.payload(2)
            let weakSecond = try WeakReference(second!)
            try fx.take(obj, second)
            try fx.take(obj, payloadTagged: 3)
            second = nil
            XCTAssertNil(weakSecond.object, "\(mode): a \(what) argument is released at once")
            fx.advance(to: 1000)
            XCTAssertEqual(Runtime.liveObjectCount, baseline, "\(mode): every argument released")
        }
    }

    func testCancelAndDiscardReleaseThePendingArguments() throws {
        for how in ["cancel", "discard"] {
            let fx = try makeFixture()
            let obj = try fx.instance()
            let rule = try obj.limit("take:", oncePer: d, mode: .last, in: fx.engine)
            var arg: Object? = try fx.payload(7)
            let weakArg = try WeakReference(arg!)
            try fx.take(obj, arg)
            arg = nil
            XCTAssertNotNil(weakArg.object)
            if how == "cancel" { rule.cancel() } else { XCTAssertTrue(rule.discard(pending: .cancel)) }
            XCTAssertNil(weakArg.object, how)
            XCTAssertNil(rule.pendingInvocation, how)
            fx.advance(to: 1000)
            XCTAssertEqual(fx.log.objectTags, [], how)
        }
    }

    func testANilObjectArgumentIsReplayedAsNil() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        try obj.limit("take:", oncePer: d, mode: .debounce, in: fx.engine)
        try fx.take(obj, nil)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.log.objectTags, [-1])
    }

    // MARK: - C strings

    func testCStringArgumentsAreCopiedForTheReplay() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("say:", oncePer: d, mode: .debounce, in: fx.engine)
        let buffer = strdup("hello")!
        try obj.send("say:", CString(buffer), as: Void.self)
        let pending = try XCTUnwrap(rule.pendingInvocation)
        let kept = try pending.argument(at: 0, as: CString.self)
        XCTAssertNotEqual(kept.pointer, UnsafePointer(buffer), "the record owns a copy")
        XCTAssertEqual(kept.string, "hello")
        // The caller reuses and frees its buffer before the replay.
        strcpy(buffer, "XXXXX")
        free(buffer)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.log.strings, ["hello"])
        // A NULL C string stays NULL.
        try obj.send("say:", CString(nil), as: Void.self)
        fx.advance(to: 2000)
        XCTAssertEqual(fx.log.strings, ["hello", "<NULL>"])
    }

    func testTheLastOfSeveralCStringsIsReplayed() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        try obj.limit("say:", oncePer: d, mode: .last, in: fx.engine)
        for word in ["one", "two", "three"] {
            try word.withCString { try obj.send("say:", CString($0), as: Void.self) }
        }
        fx.advance(to: 1000)
        XCTAssertEqual(fx.log.strings, ["three"])
    }

    // MARK: - hidden classes and reused addresses

    /// An object's hidden class must go with the object even when its hooks were all removed
    /// first, or a new object allocated at the same address and hooked inherits it.
    func testANewObjectAtAFreedAddressDoesNotInheritAStaleHiddenClass() throws {
        let fx = try makeFixture()
        let other = try makeFixture()   // another class with the same instance size
        var a: Object? = try fx.mortalInstance()
        let address = a!.raw
        let rule = try a!.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        XCTAssertTrue(rule.discard())   // a keeps its (now empty) hidden class
        a = nil                         // deallocated while not hooked: the hidden class goes too
        var others: [Object] = []
        var reused: Object?
        for _ in 0..<256 {
            let o = try other.cls.createInstance()
            if o.raw == address { reused = o; break }
            others.append(o)
        }
        guard let b = reused else { throw XCTSkip("the allocator did not reuse the freed address") }
        try b.limit("tick:", oncePer: d, mode: .firstly, in: other.engine)
        XCTAssertEqual(b.runtimeClass, other.cls)
        XCTAssertEqual(try b.send("tick:", 1, as: Int.self), 10)
        XCTAssertEqual(other.hits, [hit(1, 0)], "b's own class's method ran")
        XCTAssertEqual(fx.hits, [], "not the method of the freed object's class")
        other.engine.discardAll()
        withExtendedLifetime(others) {}
    }
}
